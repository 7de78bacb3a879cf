"""Calls into the libraries of outside services, in one shape: what they raise becomes a diagnostic.

DeepL, the Hugging Face Hub, ``datasets``, OpenAI, Anthropic, vLLM and transformers are each declared
once below: the name a user knows it by, the code of its failures, and what to do. Every call into one
of them runs inside ``service_errors(SERVICE, "doing what")``; an exception the caller's ``known``
mapping does not turn into a more precise diagnostic (a rejected key, a quota, a missing repository)
becomes ``CODE <service> failed while <doing> (<Type>: <the library's message, scrubbed>) — <hint>``.
A foreign library's exception (a ``TypeError`` on a malformed reply, a ``KeyError`` deep in a client)
therefore never reaches the user as a traceback, and never shows a secret.

``DiagnosticError`` passes through unchanged, and so do the exception types a caller names in
``allow`` (its own control flow, e.g. a batch that stopped and carries the replies it kept).
``MemoryError`` passes through too: the command line reports it (CL003).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

from .diagnostics import Diagnostic, DiagnosticError
from .redaction import redact


@dataclass(frozen=True)
class Service:
    name: str  # as a user knows it
    code: str  # the code of its unexpected failures
    hint: str  # what to do


_REPORT = "if it happens again, report it with this message"
DEEPL = Service("DeepL", "TR005", f"re-run later: finished texts are not billed again; {_REPORT}")
HUB = Service("the Hugging Face Hub", "P009", f"check the network, HF_ENDPOINT and the token; {_REPORT}")
DATASETS = Service(
    "the datasets library",
    "EV005",
    "give a build folder, a release file or a Hub id you can access (HF_TOKEN for gated datasets)",
)
OPENAI = Service(
    "the openai client",
    "EV305",
    f"check --base-url and the installed openai version; {_REPORT}",
)
ANTHROPIC = Service(
    "the anthropic client",
    "EV305",
    f"check --base-url and the installed anthropic version; {_REPORT}",
)
VLLM = Service(
    "vLLM",
    "EV310",
    f"check the model and the vLLM version; {_REPORT}",
)
TRANSFORMERS = Service(
    "transformers",
    "EV310",
    f"check the model and the transformers version; {_REPORT}",
)


def unexpected(service: Service, doing: str, error: BaseException, *secrets: str | None) -> Diagnostic:
    """The diagnostic of an error ``service`` raised while ``doing`` that nobody expected."""
    first = (str(error).splitlines() or [""])[0][:300]
    detail = f"{type(error).__name__}: {first}" if first else type(error).__name__
    return Diagnostic(
        service.code, redact(f"{service.name} failed while {doing} ({detail})", *secrets), hint=service.hint
    )


@contextmanager
def service_errors(
    service: Service,
    doing: str,
    *,
    known: Callable[[Exception], Diagnostic | None] | None = None,
    secrets: tuple[str | None, ...] = (),
    allow: tuple[type[BaseException], ...] = (),
) -> Iterator[None]:
    """Run a call into ``service``; whatever it raises becomes a ``DiagnosticError`` (see the module)."""
    try:
        yield
    except (DiagnosticError, MemoryError):
        raise
    except allow:
        raise
    except Exception as error:  # noqa: BLE001 - the point: nothing a library raises escapes raw
        found = known(error) if known is not None else None
        if found is not None:
            found = replace(
                found,
                message=redact(found.message, *secrets),
                hint=found.hint and redact(found.hint, *secrets),
            )
        raise DiagnosticError([found or unexpected(service, doing, error, *secrets)]) from None


# The Hub client's log lines while it retries, as it writes them ("Retrying in 8s [Retry 3/5].").
_RETRYING = re.compile(r"Retrying in (?P<wait>[\d.]+)s \[Retry (?P<try>\d+)/(?P<of>\d+)\]\.?")
_RATE_LIMITED = re.compile(
    r"Rate limited\. Waiting (?P<wait>[\d.]+)s before retry \[Retry (?P<try>\d+)/(?P<of>\d+)\]\.?"
)
_THROWN = re.compile(
    r"(?:HTTP Error (?P<status>\d+)|'(?P<error>.*)') thrown while requesting (?P<what>.+)", re.DOTALL
)
# The loggers of the Hub client that log them.
HUB_RETRY_LOGGERS = ("huggingface_hub.utils._http", "huggingface_hub.hf_api")


class _HubRetryWords(logging.Filter):
    """Rewrites the Hub client's retry lines, which say neither who retries nor why, into a sentence."""

    def filter(self, record: logging.LogRecord) -> bool:
        worded = hub_retry_line(record.getMessage())
        if worded is not None:
            record.msg, record.args = worded, None
        return True


def hub_retry_line(message: str) -> str | None:
    """A sentence for one of the Hub client's retry log lines; None for any other line."""
    if found := _RETRYING.fullmatch(message.strip()):
        return (
            f"the Hugging Face Hub did not answer as it should: its client asks again in {found['wait']} s "
            f"(retry {found['try']} of {found['of']}; HF_HUB_OFFLINE=1 reads its cache instead)"
        )
    if found := _RATE_LIMITED.fullmatch(message.strip()):
        return (
            f"the Hugging Face Hub limits the rate of requests: its client waits {found['wait']} s "
            f"(retry {found['try']} of {found['of']})"
        )
    if found := _THROWN.fullmatch(message.strip()):
        what = found["what"].splitlines()[0]
        if found["status"]:
            return f"the Hugging Face Hub answered HTTP {found['status']} to {what}"
        error = found["error"].splitlines()[0] if found["error"] else "an error"
        return f"the Hugging Face Hub could not be asked for {what} ({error})"
    return None


def word_hub_retries() -> None:
    """From now on the Hub client's retry lines reach the terminal as sentences (:func:`hub_retry_line`),
    never as its raw "Retrying in 8s [Retry 3/5]."; called by the command line. Idempotent."""
    for name in HUB_RETRY_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(kept, _HubRetryWords) for kept in logger.filters):
            logger.addFilter(_HubRetryWords())
