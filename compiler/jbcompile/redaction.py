"""Secrets scrubbed from everything the tool prints, logs or writes, in one place.

A *secret* is a value the tool was trusted with:

- an API key or token in the environment: the variables the tool reads (``OPENAI_API_KEY``,
  ``ANTHROPIC_API_KEY``, ``HF_TOKEN``, ``DEEPL_AUTH_KEY`` …) and any variable whose name ends in ``KEY``,
  ``TOKEN``, ``SECRET`` or ``PASSWORD``; the token saved by ``hf auth login``;
- the user info (``user:password``) of a URL in the environment (``OPENAI_BASE_URL``, ``HF_ENDPOINT``,
  ``HTTPS_PROXY`` …) or given as an option (``--base-url``, ``--server-url``: :func:`register_url`).

Each is scrubbed as it is and in every form it travels in: base64 and base64url (Basic auth, or a base64
blob holding it at any offset), percent-encoded, JSON-escaped. Values of fewer than
:data:`MIN_SECRET` characters (``EMPTY``, the key a local server takes) are not secrets.

Two levels, because scrubbing must never change data:

- :func:`redact` — every *message* (diagnostics, console lines, log records, warnings): the forms above,
  any :data:`MIN_PART` characters of a secret (servers echo parts of a wrong key), and whatever is
  *shaped* like a credential whatever its value: URL user info, ``Authorization:``/``x-api-key:``
  headers, ``Bearer``/``Basic`` credentials, ``?api_key=`` parameters, Hugging Face tokens, OpenAI and
  Anthropic keys, DeepL free keys.
- :func:`redact_data` — the text of every *file* eval and score write (run.json, results.json,
  predictions, the request cache, report.md): the known secrets' forms only, so that a model's reply
  is never altered by a look-alike.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import os
import re
import warnings
from collections.abc import Iterable
from functools import cache
from typing import Any
from urllib.parse import quote, quote_plus, unquote, urlsplit

MIN_SECRET = 8  # characters; shorter values (EMPTY, a PIN) are not treated as secrets
MIN_PART = 6  # characters of a secret that a message may not show (servers echo parts of a key)
MASK = "***"

# Variables whose value is a credential (the ones the tool reads, and any named like one).
SECRET_VARIABLES = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
    "DEEPL_AUTH_KEY",
)
_SECRET_NAME = re.compile(r"(?:^|_)(?:API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD)$", re.IGNORECASE)

_registered: set[str] = set()

# ---- shapes: credentials recognized whatever their value (messages only) ---------------------------

_URL_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)[^/@\s?#\"']+@")
_HEADER = re.compile(
    r"(?P<name>\b(?:proxy-)?authorization|\bx-api-key|\bapi-key|\bx-goog-api-key)(?P<sep>[\"']?\s*[:=]\s*[\"']?)"
    r"(?P<value>[^\r\n\"',;}]+)",
    re.IGNORECASE,
)
# "Token" is also an English word ("token limits"): after it, only a value that looks made (a digit or a
# symbol in it, or 20 characters and more) is taken for a credential; after "Bearer", any value is.
_BEARER = re.compile(
    r"\b(?P<scheme>Bearer|DeepL-Auth-Key|Token)\s+(?P<value>[A-Za-z0-9._~+/=:-]{6,})", re.IGNORECASE
)
_WORD = re.compile(r"[A-Za-z]{6,19}")

_BASIC = re.compile(r"\bBasic\s+(?P<value>[A-Za-z0-9+/_-]{4,}={0,2})", re.IGNORECASE)
_QUERY = re.compile(
    r"(?P<name>[?&](?:api[_-]?key|key|token|access_token|auth|password|signature|sig)=)[^&\s#\"']+",
    re.IGNORECASE,
)
_SHAPED = (
    (re.compile(r"\bhf_[A-Za-z0-9]{20,}"), "hf_" + MASK),  # Hugging Face tokens
    (re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"), "sk-" + MASK),  # OpenAI and Anthropic keys
    (
        re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}:fx\b"),
        MASK + ":fx",
    ),  # DeepL
)


def _basic(match: re.Match[str]) -> str:
    """``Basic <base64 of user:password>`` → ``Basic ***`` (other words after "Basic" are left alone)."""
    value = match.group("value")
    try:
        decoded = base64.b64decode(
            value + "=" * (-len(value) % 4), altchars=b"-_" if "-" in value or "_" in value else None
        )
    except (binascii.Error, ValueError):
        return match.group(0)
    return match.group(0).replace(value, MASK) if b":" in decoded else match.group(0)


def _bearer(match: re.Match[str]) -> str:
    word = match.group("scheme").lower() == "token" and _WORD.fullmatch(match.group("value"))
    return match.group(0) if word else f"{match.group('scheme')} {MASK}"


def _shapes(text: str) -> str:
    text = _URL_USERINFO.sub(r"\g<scheme>" + MASK + "@", text)
    text = _HEADER.sub(lambda m: m.group("name") + m.group("sep") + MASK, text)
    text = _BEARER.sub(_bearer, text)
    text = _BASIC.sub(_basic, text)
    text = _QUERY.sub(r"\g<name>" + MASK, text)
    for pattern, mask in _SHAPED:
        text = pattern.sub(mask, text)
    return text


# ---- known secrets and their forms -------------------------------------------------------------------


def register_secret(value: str | None) -> None:
    """A secret given on the command line (not in the environment): scrubbed from now on."""
    if value and len(value) >= MIN_SECRET:
        _registered.add(value)


def register_url(url: str | None) -> None:
    """A URL given as an option: its user info (and password) become secrets."""
    for secret in _url_secrets(url):
        _registered.add(secret)


def _url_secrets(url: str | None) -> list[str]:
    """The user info of a URL as written and decoded (``user:p%40ss`` and ``user:p@ss``), and the
    password alone."""
    if not url or "@" not in url or "://" not in url:
        return []
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return []
    userinfo = parts.netloc.rpartition("@")[0] if "@" in parts.netloc else ""
    if not userinfo:
        return []
    found = {userinfo, unquote(userinfo), f"//{userinfo}@"}  # the last: the URL as written, however short
    if parts.password:
        found |= {parts.password, unquote(parts.password)}
    return sorted(found)


def _looks_like_path(value: str) -> bool:
    return value.startswith(("/", "~", "./", "../")) or os.path.sep in value and os.path.exists(value)


# The most of a saved token file that is read: a token is a few dozen characters.
_TOKEN_FILE_LIMIT = 4096


@cache
def _saved_hub_token() -> str | None:
    """The token ``hf auth login`` saved (read once per process; None when there is none).

    Read from the file the Hub client keeps it in (``huggingface_hub.constants.HF_TOKEN_PATH``), not
    through ``huggingface_hub.get_token``: that may exchange or refresh a token over the network (OIDC,
    OAuth), and scrubbing a message must never touch the network or rewrite the user's token file. It
    also keeps every command's start-up from loading the Hub client's HTTP stack.
    """
    try:
        from huggingface_hub import constants

        if not os.path.isfile(constants.HF_TOKEN_PATH):  # a FIFO there would block the open
            return None
        with open(constants.HF_TOKEN_PATH, "rb") as file:
            token = file.read(_TOKEN_FILE_LIMIT).decode("utf-8", "replace").strip()
    except Exception:  # noqa: BLE001 - no huggingface_hub, no token file, an unreadable one: nothing to hide
        return None
    return token or None


def known_secrets() -> tuple[str, ...]:
    """Every secret this process holds now (the environment is read each time: it may change)."""
    found: set[str] = set(_registered)
    for name, value in os.environ.items():
        if not value:
            continue
        named = name in SECRET_VARIABLES or (_SECRET_NAME.search(name) and not _looks_like_path(value))
        if named and len(value) >= MIN_SECRET:
            found.add(value)
        if "://" in value and "@" in value:
            found.update(_url_secrets(value))
    token = _saved_hub_token()
    if token and len(token) >= MIN_SECRET:
        found.add(token)
    return tuple(sorted(found))


def forms(secret: str) -> tuple[set[str], set[str]]:
    """The ways ``secret`` appears in text: (as it is, percent-encoded, JSON-escaped), and its base64 /
    base64url at each of the three offsets it may sit at inside a longer base64 blob (the characters
    that depend on the secret alone)."""
    plain: set[str] = set()
    if len(secret) >= MIN_SECRET:
        plain = {secret, quote(secret, safe=""), quote_plus(secret), json.dumps(secret)[1:-1]}
        plain |= {quote(secret, safe="").lower(), quote(secret, safe="@:")}
    encoded: set[str] = set()
    raw = secret.encode("utf-8")
    for offset in range(3):
        blob = base64.b64encode(b"\0" * offset + raw).decode("ascii")
        core = blob[-(-4 * offset // 3) : 4 * (offset + len(raw)) // 3]
        if len(core) >= MIN_SECRET:
            encoded |= {core, core.replace("+", "-").replace("/", "_")}
    return plain, encoded


@cache
def _pattern(secrets: tuple[str, ...]) -> re.Pattern[str] | None:
    """One pattern for every form of every secret; a base64 form takes the rest of its blob's group
    with it (those characters too hold bits of the secret)."""
    plain: set[str] = set()
    encoded: set[str] = set()
    for secret in secrets:
        more_plain, more_encoded = forms(secret)
        plain |= more_plain
        encoded |= more_encoded
    alternatives = [re.escape(form) for form in sorted(plain, key=len, reverse=True)]
    if encoded:
        cores = "|".join(re.escape(form) for form in sorted(encoded, key=len, reverse=True))
        alternatives.insert(0, f"[A-Za-z0-9+/_-]{{0,2}}(?:{cores})[A-Za-z0-9+/_-]{{0,3}}={{0,2}}")
    return re.compile("|".join(alternatives)) if alternatives else None


@cache
def _parts(secrets: tuple[str, ...]) -> frozenset[str]:
    """Every run of :data:`MIN_PART` characters of a secret (what a server echoes of a wrong key)."""
    return frozenset(
        secret[i : i + MIN_PART]
        for secret in secrets
        if len(secret) >= MIN_SECRET and not (secret.startswith("//") and secret.endswith("@"))
        for i in range(len(secret) - MIN_PART + 1)
    )


def _mask_parts(text: str, parts: frozenset[str]) -> str:
    if not parts or len(text) < MIN_PART:
        return text
    hidden = bytearray(len(text))
    for i in range(len(text) - MIN_PART + 1):
        if text[i : i + MIN_PART] in parts:
            hidden[i : i + MIN_PART] = b"\1" * MIN_PART
    if not any(hidden):
        return text
    pieces, i = [], 0
    while i < len(text):
        if hidden[i]:
            while i < len(text) and hidden[i]:
                i += 1
            pieces.append(MASK)
        else:
            start = i
            while i < len(text) and not hidden[i]:
                i += 1
            pieces.append(text[start:i])
    return "".join(pieces)


def _mask(match: re.Match[str]) -> str:
    found = match.group(0)
    return f"//{MASK}@" if found.startswith("//") and found.endswith("@") else MASK


def _all(extra: Iterable[str | None]) -> tuple[str, ...]:
    more = [value for value in extra if value]
    return tuple(sorted({*known_secrets(), *more})) if more else known_secrets()


def redact_data(text: str, *extra: str | None) -> str:
    """A file's text without any known secret, in any of its forms (nothing else is changed)."""
    pattern = _pattern(_all(extra))
    return pattern.sub(_mask, text) if pattern is not None else text


def redact(text: str, *extra: str | None) -> str:
    """A message without secrets: the known ones in every form and in part, and anything shaped like a
    credential. ``extra``: secrets the caller holds that are not registered (a session's token)."""
    secrets = _all(extra)
    pattern = _pattern(secrets)
    if pattern is not None:  # whole secrets first: a shape could take a part and leave the rest
        text = pattern.sub(_mask, text)
    return _mask_parts(_shapes(text), _parts(secrets))


def redact_url(url: str | None) -> str | None:
    """A URL to show or record: no user info, query or fragment (they may hold credentials)."""
    if not url:
        return url
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:  # not a URL at all (a bad port, brackets): show nothing of it that may be secret
        return redact(url)
    if ":" in host:
        host = f"[{host}]"
    if port:
        host = f"{host}:{port}"
    return f"{parts.scheme}://{host}{parts.path}" if parts.scheme else f"{host}{parts.path}"


# ---- every log record and warning of the process ------------------------------------------------------


def _ours(function: Any) -> bool:
    return getattr(function, "_jbcompile_scrubs", False)


def _wraps_ours(factory: Any) -> bool:
    """Our record factory, or a library's that calls the one it found (vLLM wraps the factory)."""
    seen = 0
    while factory is not None and seen < 16:
        if _ours(factory):
            return True
        factory = getattr(factory, "_factory", None) or getattr(factory, "factory", None)
        seen += 1
    return False


def scrub_logs_and_warnings() -> None:
    """From now on every log record (of any library) and every warning shown is redacted; called by the
    command line (a library user keeps their own logging untouched). Idempotent, and it installs itself
    again where something replaced the record factory or the warning formatter without keeping ours."""
    make_record = logging.getLogRecordFactory()
    if not _wraps_ours(make_record):

        def scrubbed_record(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = make_record(*args, **kwargs)
            try:
                message = record.getMessage()
            except Exception:  # noqa: BLE001 - a record whose arguments do not fit its format: left as is
                return record
            record.msg, record.args = redact(message), None
            return record

        scrubbed_record._jbcompile_scrubs = True  # type: ignore[attr-defined]
        logging.setLogRecordFactory(scrubbed_record)
    format_warning = warnings.formatwarning
    if not _ours(format_warning):

        def scrubbed_warning(message, category, filename, lineno, line=None) -> str:  # noqa: ANN001
            return redact(format_warning(message, category, filename, lineno, line))

        scrubbed_warning._jbcompile_scrubs = True  # type: ignore[attr-defined]
        warnings.formatwarning = scrubbed_warning
