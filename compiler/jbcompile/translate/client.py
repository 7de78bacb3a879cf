"""The one place that talks to DeepL (through the official ``deepl`` client) and names its failures.

Every call into the client runs inside :meth:`DeepLTranslator._calls` (``jbcompile.services``): the
client's own exceptions become their codes (TR001–TR004, TR005 for any other), and anything else it
raises — a ``TypeError`` on a malformed glossary list, a ``KeyError`` on a reply without a field —
becomes TR005 naming DeepL, what was being done and the message, with the key scrubbed. What the client
returns is checked before it is used (a translation that is not text, a billed count that is not one).

Error tree::

    TranslationStopped         DeepL cannot go on (bad key, quota, rate limit, network, server error,
                               a malformed reply); carries one Diagnostic saying what happened and what to do
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..diagnostics import Diagnostic, DiagnosticError
from ..extras import optional_import
from ..redaction import register_url
from ..services import DEEPL, service_errors

if TYPE_CHECKING:
    import deepl
    from deepl.api_data import MultilingualGlossaryDictionaryEntries

from .protect import SLOT_TAG

AUTH_KEY_ENV = "DEEPL_AUTH_KEY"
SERVER_URL_ENV = "DEEPL_SERVER_URL"
MAX_TEXTS_PER_REQUEST = 50  # DeepL's limit of `text` values per request
_AGAIN = "re-run: finished texts are not billed again; if it persists, report it"


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


def key_problem(auth_key: str) -> Diagnostic | None:
    """TR007 when the key cannot be sent at all (it goes in an HTTP header: printable ASCII, no spaces),
    so that a pasted key with a stray character is not reported as a network failure; the key itself
    is never shown, not even in part."""
    if all("!" <= char <= "~" for char in auth_key):
        return None
    if any(not char.isascii() for char in auth_key):
        what = "a character that is not ASCII"
    elif any(char.isspace() for char in auth_key):
        what = "a space or line break inside it"
    else:
        what = "a control character"
    return Diagnostic(
        "TR007",
        f"{AUTH_KEY_ENV} is malformed: it holds {what}, so it cannot be sent (nothing was sent)",
        hint=f"set {AUTH_KEY_ENV} to the key exactly as DeepL's account page shows it (letters, digits, "
        "'-' and ':fx'; copy it again if it was pasted with other characters)",
    )


def known_failure(exc: Exception) -> Diagnostic | None:
    """The diagnostic of an exception of the deepl library itself (None for any other type)."""
    deepl = optional_import("deepl", "translate")

    status = getattr(exc, "http_status_code", None)
    if isinstance(exc, deepl.AuthorizationException) or status == 403:
        return Diagnostic(
            "TR001",
            "DeepL rejected the API key (HTTP 403)",
            hint=f"check {AUTH_KEY_ENV}, and that the server URL matches the key (free keys end in ':fx')",
        )
    if isinstance(exc, deepl.QuotaExceededException) or status == 456:
        return Diagnostic(
            "TR002",
            "DeepL character quota for this billing period is used up (HTTP 456)",
            hint="raise the quota or wait for the next period, then re-run: finished texts are not "
            "billed again",
        )
    if isinstance(exc, deepl.TooManyRequestsException) or status == 429:
        return Diagnostic(
            "TR003",
            "DeepL kept answering 'too many requests' (HTTP 429) after retrying with backoff",
            hint="wait a few minutes and re-run: finished texts are not billed again",
        )
    if isinstance(exc, deepl.ConnectionException):
        return Diagnostic(
            "TR004",
            f"cannot reach DeepL: {exc}",
            hint="check the network and --server-url / DEEPL_SERVER_URL, then re-run",
        )
    if isinstance(exc, deepl.DeepLException):
        return Diagnostic(
            "TR005",
            f"DeepL request failed: {exc}",
            hint="re-run later; if it persists, check the request in the message",
        )
    return None


def _entries_of(dictionaries: Sequence[MultilingualGlossaryDictionaryEntries]) -> dict[str, str]:
    """Entries of a glossary as a dict (the API sends them as TSV text)."""
    convert_tsv_to_dict = optional_import("deepl.util", "translate").convert_tsv_to_dict

    entries: dict[str, str] = {}
    for dictionary in dictionaries:
        raw = dictionary.entries
        entries.update(convert_tsv_to_dict(raw) if isinstance(raw, str) else dict(raw))
    return entries


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
        library = optional_import("deepl", "translate", "`jbcompile translate`")

        malformed = key_problem(auth_key)
        if malformed is not None:
            raise TranslationStopped(malformed)
        self._key = auth_key
        register_url(server_url)
        self.source_lang = source_lang
        self.target_lang = target_lang
        self.formality = formality
        with self._calls("creating the client"):
            if max_retries is not None:
                library.http_client.max_network_retries = max_retries
            self._client: deepl.DeepLClient = library.DeepLClient(auth_key, server_url=server_url)

    @contextmanager
    def _calls(self, doing: str) -> Iterator[None]:
        """A call into the deepl client: whatever it raises stops the run with a diagnostic."""
        try:
            with service_errors(DEEPL, doing, known=known_failure, secrets=(self._key,)):
                yield
        except DiagnosticError as error:
            raise TranslationStopped(error.diagnostics[0]) from None

    def close(self) -> None:
        with self._calls("closing the connection"):
            self._client.close()

    def ensure_glossary(self, name: str, entries: dict[str, str]) -> str:
        """The id of the glossary ``name`` on DeepL holding exactly ``entries`` (created or updated)."""
        Entries = optional_import("deepl.api_data", "translate").MultilingualGlossaryDictionaryEntries

        try:  # the client validates our terms before anything is sent
            wanted = Entries(self.source_lang, self.target_lang, entries)
        except ValueError as exc:
            raise _stopped(
                "TR011",
                f"DeepL does not accept the glossary: {exc}",
                "fix the entry in translations/glossary.yaml",
            ) from None
        with self._calls(f"reading and updating the glossary {name!r}"):
            for info in self._client.list_multilingual_glossaries():
                if info.name != name:
                    continue
                current = self._client.get_multilingual_glossary_entries(
                    info, self.source_lang, self.target_lang
                )
                if _entries_of(current.dictionaries) != entries:
                    self._client.replace_multilingual_glossary_dictionary(info, wanted)
                glossary_id = info.glossary_id
                break
            else:
                glossary_id = self._client.create_multilingual_glossary(name, [wanted]).glossary_id
        if not isinstance(glossary_id, str) or not glossary_id:
            raise _stopped(
                "TR005", f"DeepL answered a glossary id that is not one: {glossary_id!r}"[:200], _AGAIN
            )
        return glossary_id

    def translate(
        self, texts: Sequence[str], context: str | None = None, glossary_id: str | None = None
    ) -> list[Translated]:
        """Translate protected texts (see :mod:`.protect`) in one request."""
        with self._calls("translating"):
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
            found = results if isinstance(results, list) else [results]
            pairs = [(result.text, result.billed_characters) for result in found]
        if len(pairs) != len(texts):
            raise _stopped(
                "TR005", f"DeepL returned {len(pairs)} translations for {len(texts)} texts", _AGAIN
            )
        for text, billed in pairs:
            counted = billed is None or (
                isinstance(billed, int) and not isinstance(billed, bool) and billed >= 0
            )
            if not isinstance(text, str) or not counted:
                shown = f"text {str(text)[:40]!r}, billed {str(billed)[:20]!r}"
                raise _stopped("TR005", f"DeepL returned a translation that is not one ({shown})", _AGAIN)
        return [Translated(text, billed or 0) for text, billed in pairs]
