"""The one place that talks to DeepL (through the official ``deepl`` client) and names its failures.

Error tree::

    TranslationStopped         DeepL cannot go on (bad key, quota, rate limit, network, server error);
                               carries one Diagnostic saying what happened and what to do
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..diagnostics import Diagnostic

if TYPE_CHECKING:
    import deepl
    from deepl.api_data import MultilingualGlossaryDictionaryEntries

from .protect import SLOT_TAG

AUTH_KEY_ENV = "DEEPL_AUTH_KEY"
SERVER_URL_ENV = "DEEPL_SERVER_URL"
MAX_TEXTS_PER_REQUEST = 50  # DeepL's limit of `text` values per request


class TranslationStopped(Exception):
    """DeepL refused or failed; what was translated before is kept by the caller."""

    def __init__(self, diagnostic: Diagnostic):
        self.diagnostic = diagnostic
        super().__init__(diagnostic.message)


@dataclass(frozen=True)
class Translated:
    text: str  # DeepL's raw output (slot tags still in it)
    billed_characters: int


def _stopped(code: str, message: str, hint: str) -> TranslationStopped:
    return TranslationStopped(Diagnostic(code=code, message=message, hint=hint))


def describe_failure(exc: Exception) -> TranslationStopped:
    """Map an exception of the deepl library to a coded diagnostic (the key is never in the text)."""
    import deepl

    status = getattr(exc, "http_status_code", None)
    if isinstance(exc, deepl.AuthorizationException) or status == 403:
        return _stopped(
            "TR001",
            "DeepL rejected the API key (HTTP 403)",
            f"check {AUTH_KEY_ENV}, and that the server URL matches the key (free keys end in ':fx')",
        )
    if isinstance(exc, deepl.QuotaExceededException) or status == 456:
        return _stopped(
            "TR002",
            "DeepL character quota for this billing period is used up (HTTP 456)",
            "raise the quota or wait for the next period, then re-run: finished texts are not billed again",
        )
    if isinstance(exc, deepl.TooManyRequestsException) or status == 429:
        return _stopped(
            "TR003",
            "DeepL kept answering 'too many requests' (HTTP 429) after retrying with backoff",
            "wait a few minutes and re-run: finished texts are not billed again",
        )
    if isinstance(exc, deepl.ConnectionException):
        return _stopped(
            "TR004",
            f"cannot reach DeepL: {_without_secrets(str(exc))}",
            "check the network and --server-url / DEEPL_SERVER_URL, then re-run",
        )
    return _stopped(
        "TR005",
        f"DeepL request failed: {_without_secrets(str(exc))}",
        "re-run later; if it persists, check the request in the message",
    )


def _entries_of(dictionaries: Sequence[MultilingualGlossaryDictionaryEntries]) -> dict[str, str]:
    """Entries of a glossary as a dict (the API sends them as TSV text)."""
    from deepl.util import convert_tsv_to_dict

    entries: dict[str, str] = {}
    for dictionary in dictionaries:
        raw = dictionary.entries
        entries.update(convert_tsv_to_dict(raw) if isinstance(raw, str) else dict(raw))
    return entries


def _without_secrets(text: str) -> str:
    key = os.environ.get(AUTH_KEY_ENV)
    return text.replace(key, "***") if key else text


class DeepLTranslator:
    """EN→JA text translation with protected slots, context and the dataset's glossary."""

    def __init__(
        self,
        auth_key: str,
        server_url: str | None = None,
        source_lang: str = "EN",
        target_lang: str = "JA",
        formality: str | None = None,
        max_retries: int | None = None,
    ):
        try:
            import deepl
            import deepl.http_client
        except ImportError:
            raise _stopped(
                "TR015", "the deepl library is not installed", "pip install 'jbcompile[translate]'"
            ) from None

        if max_retries is not None:
            deepl.http_client.max_network_retries = max_retries
        self._client: deepl.DeepLClient = deepl.DeepLClient(auth_key, server_url=server_url)
        self.source_lang = source_lang
        self.target_lang = target_lang
        self.formality = formality

    def close(self) -> None:
        self._client.close()

    def ensure_glossary(self, name: str, entries: dict[str, str]) -> str:
        """The id of the glossary ``name`` on DeepL holding exactly ``entries`` (created or updated)."""
        import deepl
        from deepl.api_data import MultilingualGlossaryDictionaryEntries

        try:
            for info in self._client.list_multilingual_glossaries():
                if info.name != name:
                    continue
                current = self._client.get_multilingual_glossary_entries(
                    info, self.source_lang, self.target_lang
                )
                current_entries = _entries_of(current.dictionaries)
                if current_entries != entries:
                    self._client.replace_multilingual_glossary_dictionary(
                        info,
                        MultilingualGlossaryDictionaryEntries(self.source_lang, self.target_lang, entries),
                    )
                return info.glossary_id
            created = self._client.create_multilingual_glossary(
                name,
                [MultilingualGlossaryDictionaryEntries(self.source_lang, self.target_lang, entries)],
            )
            return created.glossary_id
        except deepl.DeepLException as exc:
            raise describe_failure(exc) from None
        except ValueError as exc:  # the client validates terms before sending them
            raise _stopped(
                "TR011",
                f"DeepL does not accept the glossary: {exc}",
                "fix the entry in translations/glossary.yaml",
            ) from None

    def translate(
        self, texts: Sequence[str], context: str | None = None, glossary_id: str | None = None
    ) -> list[Translated]:
        """Translate protected texts (see :mod:`.protect`) in one request."""
        import deepl

        try:
            results = self._client.translate_text(
                list(texts),
                source_lang=self.source_lang,
                target_lang=self.target_lang,
                context=context,
                glossary=glossary_id,
                formality=self.formality,
                tag_handling="xml",
                ignore_tags=[SLOT_TAG],
                outline_detection=False,
                split_sentences="nonewlines",
            )
        except deepl.DeepLException as exc:
            raise describe_failure(exc) from None
        if not isinstance(results, list):  # the client answers a single text with a single result
            results = [results]
        if len(results) != len(texts):
            raise _stopped(
                "TR005",
                f"DeepL returned {len(results)} translations for {len(texts)} texts",
                "re-run; if it persists, report it",
            )
        return [Translated(r.text, r.billed_characters or 0) for r in results]
