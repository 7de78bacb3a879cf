"""What every backend that pays per request shares, written once: requests in flight, retries, a request
cache on disk, usage.

A provider module (``openai``, ``anthropic``) only says how a prompt becomes a request body, how a
response becomes a reply or option log-probabilities, and which of its client's errors are worth a retry.
This layer sends up to ``--concurrency`` requests at a time; retries 429 (waiting what ``Retry-After``
asks), 5xx, timeouts, dropped connections and *server faults* with exponential backoff; and writes every
response to the request cache (fsynced) the moment it is read, keyed by the exact request, so a rerun, a
resume or a re-scoring never sends — or pays for — the same request twice. When a request still fails
after ``max_attempts``, the requests already running finish, and ``BatchFailed`` carries every reply that
came back, so that the runner can keep them before it stops with the diagnostic.

A server fault is a response that is not an answer: a body that is not JSON, a 200 that holds an error,
a reply without the fields the provider reads (no ``choices``, no ``content``, a content of the wrong
type) or with a usage count that is not a number. The provider's readers raise :class:`ServerFault`;
such a response is retried like a 5xx, never cached and never counted, and a cached response that does
not read (kept by an older version) is asked again.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar

from ...diagnostics import Diagnostic, DiagnosticError
from ...extras import optional_import
from ...redaction import redact, redact_data, redact_url, register_secret, register_url
from ...services import Service, unexpected
from ..jsonfile import read_json_lines
from ..predictions import request_cache_line
from ..prompting import ChatPrompt, Message, Prompt
from .base import BackendConfig, Reply, library_version
from .options import Options
from .registry import options_for

# Statuses worth another attempt: timeout, conflict, rate limit, server errors, Anthropic's "overloaded".
RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
# Error codes that say "no more money or quota": retrying cannot help, stop at once.
QUOTA_CODES = ("insufficient_quota", "billing", "credit balance")
MAX_RETRY_AFTER = 300.0  # seconds; a longer Retry-After is a quota, not a rate limit


class RemoteOptions(Options):
    """What every request-based backend takes: where the server is and how hard to try."""

    base_url: str | None = None
    concurrency: int = 8  # requests in flight
    max_attempts: int = 6
    backoff_seconds: float = 1.0  # first wait between attempts when the server gives no Retry-After
    timeout: float = 600.0  # seconds per request

    def checks(self) -> list[tuple[bool, str]]:
        return [
            (self.concurrency >= 1, "--concurrency must be 1 or more"),
            (self.max_attempts >= 1, "--max-attempts must be 1 or more"),
            (self.timeout > 0, "--timeout must be more than 0 seconds"),
            *super().checks(),
        ]

    def refusals(self) -> list[tuple[str, str]]:
        """A base URL with a query or fragment: the clients put each request's path after the whole URL,
        so the query would land before it (a 404 at best). Said without the URL, whose query may hold a
        token."""
        url = self.base_url or ""
        if "?" not in url and "#" not in url:
            return super().refusals()
        return [
            *super().refusals(),
            (
                "--base-url carries a query string or fragment (a '?' or '#'; the URL is not shown, as "
                "it may hold a secret): the client appends each request's path (/chat/completions) to "
                "the whole URL, so the server would get a path it does not serve",
                "give the server's base URL alone (e.g. http://host:8000/v1); put a key or token in the "
                "backend's key variable (OPENAI_API_KEY, ANTHROPIC_API_KEY), which is sent as a header",
            ),
        ]


class MessagesTemplate:
    """The "tokenizer" of a chat API: a chat prompt stays a list of messages, which the server formats."""

    chat_template = "messages"

    def apply_chat_template(self, messages: list[Message], **_: Any) -> ChatPrompt:
        return ChatPrompt(tuple(dict(message) for message in messages))


@dataclass
class Usage:
    """The run's bill: requests sent (retries included), fresh replies, cache hits, tokens."""

    requests: int = 0
    retries: int = 0
    replies: int = 0
    cached: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


class ServerFault(Exception):
    """A response that is not an answer (see the module's docstring): retried, never kept or counted."""


def need(condition: bool, what: str) -> None:
    """Raise :class:`ServerFault` saying ``what`` the response lacks, unless ``condition`` holds."""
    if not condition:
        raise ServerFault(what)


def token_count(usage: Any, name: str) -> int:
    """A usage field as a count: absent or null is 0 (many servers count nothing); anything but a
    whole, finite, non-negative number is a server fault."""
    if usage is None:
        return 0
    need(isinstance(usage, dict), f"a usage that is not an object ({type(usage).__name__})")
    value = usage.get(name)
    if value is None:
        return 0
    number = isinstance(value, int | float) and not isinstance(value, bool)
    need(
        number and math.isfinite(value) and value >= 0 and value == int(value),
        f"a usage {name} that is not a count ({json.dumps(value)[:40]})",
    )
    return int(value)


def json_body(raw: Any) -> dict[str, Any]:
    """The JSON object of a raw HTTP response (an ``httpx.Response``); a body that is not one is a fault."""
    try:
        body = raw.json()
    except ValueError:  # cut short, or not JSON at all (an HTML page from a proxy)
        kind = raw.headers.get("content-type", "no content-type")
        raise ServerFault(f"a body that is not JSON ({kind}, {len(raw.content)} bytes)") from None
    need(isinstance(body, dict), f"a body that is not a JSON object ({type(body).__name__})")
    error = body.get("error")
    if error and not any(key in body for key in ("choices", "content")):
        message = error.get("message") if isinstance(error, dict) else error
        raise ServerFault(f"an error in a 200 reply: {str(message)[:200]}")
    return body


class BatchFailed(Exception):
    """A request failed for good; ``done`` holds the result of every request of the batch that finished."""

    def __init__(self, diagnostic: Diagnostic, done: dict[int, Any]):
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic
        self.done = done


class RequestCache:
    """Responses keyed by the exact request, one JSON line each, appended and fsynced as they arrive."""

    def __init__(self, path: Path | None):
        self.path = path
        self._entries: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._sync_lock = threading.Lock()
        self._handle: Any = None
        self._written = self._synced = 0
        if path is not None and path.is_file():
            # A line cut short by an interruption, or unreadable, only means that request is sent again.
            for _, entry in read_json_lines(path, tail_may_be_cut=True).records:
                if isinstance(entry.get("key"), str) and "response" in entry:
                    self._entries[entry["key"]] = entry["response"]

    @staticmethod
    def key(request: dict[str, Any]) -> str:
        return hashlib.sha256(json.dumps(request, sort_keys=True, ensure_ascii=False).encode()).hexdigest()

    def get(self, key: str) -> Any | None:
        return self._entries.get(key)

    def put(self, key: str, response: Any) -> None:
        """Append the response and return once it is on disk. Writers that arrive while a sync runs
        share the next one (group commit): with many requests in flight, one fsync covers many replies."""
        with self._lock:
            self._entries[key] = response
            if self.path is None:
                return
            if self._handle is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._handle = self.path.open("a", encoding="utf-8")
            line = request_cache_line(key, response)
            self._handle.write(redact_data(line) + "\n")
            self._handle.flush()
            self._written += 1
            mine = self._written
        with self._sync_lock:
            if self._synced >= mine:
                return  # another writer's fsync covered this line
            with self._lock:
                covered = self._written
                descriptor = self._handle.fileno()
            os.fsync(descriptor)
            self._synced = covered

    def close(self) -> None:
        with self._lock:
            if self._handle is not None:
                self._handle.close()
                self._handle = None


def secret_from_env(names: Sequence[str], backend: str) -> str:
    """The first of ``names`` set in the environment; the key itself is never printed or written."""
    for name in names:
        value = os.environ.get(name)
        if value:
            register_secret(value)
            return value
    raise DiagnosticError(
        [
            Diagnostic(
                "EV301",
                f"the {backend} backend needs an API key in the environment variable {names[0]}",
                hint=f"export {names[0]}=… (a local server that needs no key accepts any value, e.g. EMPTY)",
            )
        ]
    )


class RemoteBackend:
    """The generic half of a request-based backend; a provider subclass fills in the hooks below."""

    name = "remote"
    service: ClassVar[Service]  # the client library the provider sends with (its failures' name)
    Options: ClassVar[type[RemoteOptions]] = RemoteOptions
    key_variables: tuple[str, ...] = ()
    # the client's exception classes for a dropped connection or a timeout (set by the provider)
    connection_errors: tuple[type[BaseException], ...] = ()

    def __init__(self, config: BackendConfig):
        optional_import("tenacity", "api")  # the retries need it: say so before any request is sent
        self.config = config
        self.options = options_for(type(self), config)
        self.concurrency = max(1, self.options.concurrency)
        # rows per runner batch: enough to keep every slot busy, few enough that replies reach the
        # predictions log often
        self.batch_size = max(config.batch_size, 4 * self.concurrency)
        self.dtype: str | None = None
        self.tokenizer: Any = self.load_tokenizer(config)
        self.usage = Usage()
        self.cache = RequestCache(config.request_cache)
        self.server_model: str | None = None
        self.server_version: str | None = None
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix=self.name)
        register_url(self.options.base_url)  # its user info, if any, is scrubbed from every output
        self.base_url = redact_url(self.options.base_url)
        self.secret = ""  # set by a provider that reads a key; only ever used to scrub messages

    # ---- provider hooks ----------------------------------------------------------------------------

    def generate_request(
        self, prompt: Prompt, max_new_tokens: int, stop_strings: Sequence[str]
    ) -> dict[str, Any]:
        """The exact request body of one generation (model, prompt or messages, sampling settings)."""
        raise NotImplementedError

    def score_request(self, prompt: Prompt) -> dict[str, Any]:
        """The request of one option scoring: one token, with the top log-probabilities."""
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV302",
                    f"the {self.name} backend returns no log-probabilities: it cannot use --scoring logprob",
                    hint="add --scoring generate",
                )
            ]
        )

    def send(self, request: dict[str, Any]) -> dict[str, Any]:
        """Send one request with the provider's client; return the response's JSON object as the server
        sent it (:func:`json_body`: a body that is not one is a :class:`ServerFault`)."""
        raise NotImplementedError

    def reply_of(self, response: dict[str, Any]) -> Reply:
        """The reply a response holds; :class:`ServerFault` when it holds none."""
        raise NotImplementedError

    def option_logprobs(self, response: dict[str, Any], labels: Sequence[str]) -> list[float]:
        """The labels' log-probabilities; :class:`ServerFault` when the response is malformed."""
        raise NotImplementedError

    def tokens_of(self, response: dict[str, Any]) -> tuple[int, int]:
        """Input and output tokens the response reports (0 when it does not; :func:`token_count`)."""
        return 0, 0

    def server_of(self, response: dict[str, Any]) -> tuple[str | None, str | None]:
        """The model id and version string (fingerprint) the server reports (text, or nothing)."""
        model, version = response.get("model"), response.get("system_fingerprint")
        return (model if isinstance(model, str) else None), (version if isinstance(version, str) else None)

    # ---- the interface the runner calls ---------------------------------------------------------------

    def encode(self, texts: Sequence[Prompt], *, chat: bool) -> list[Prompt]:
        """A server tokenizes by itself: a prompt travels as it is (its length orders the batches)."""
        return list(texts)

    def label_token_ids(self, labels: Sequence[str], sample_prompt: Prompt, *, chat: bool) -> list[str]:
        self.score_request(sample_prompt)  # a backend that cannot score says so before any request
        return list(labels)

    def score(self, sequences, keys, label_ids) -> list[list[float]]:
        requests = [self.score_request(prompt) for prompt in sequences]
        return self.run(requests, lambda response: self.option_logprobs(response, label_ids))

    def generate(
        self,
        sequences,
        keys,
        max_new_tokens: int,
        stop_strings: Sequence[str] = (),
        answer_is_final: Callable[[str], bool] | None = None,
    ) -> list[str]:
        requests = [self.generate_request(prompt, max_new_tokens, stop_strings) for prompt in sequences]
        return self.run(requests, self.reply_of)

    @classmethod
    def load_tokenizer(cls, config: BackendConfig) -> Any:
        return MessagesTemplate()  # the server applies the chat template

    @classmethod
    def describe_idle(cls, config: BackendConfig) -> tuple[str | None, dict[str, Any]]:
        options = options_for(cls, config)
        return None, {
            "name": cls.name,
            "base_url": redact_url(options.base_url),
            "server_model": None,
            "server_version": None,
            "version": library_version(cls.name),
            "sampling": asdict(config.sampling),
            "concurrency": max(1, options.concurrency),
            "usage": asdict(Usage()),
        }

    def describe(self) -> dict[str, Any]:
        return {
            **self.describe_idle(self.config)[1],
            "server_model": self.server_model,
            "server_version": self.server_version,
            "usage": asdict(self.usage),
        }

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        self.cache.close()

    # ---- the generic layer ----------------------------------------------------------------------------

    def run(self, requests: Sequence[dict[str, Any]], read: Callable[[dict[str, Any]], Any]) -> list[Any]:
        """Every request's result, in order: from the cache, or sent (``concurrency`` at a time). A cached
        response that does not read (a fault an older version kept) is sent again."""
        keyed = [
            RequestCache.key({"backend": self.name, "base_url": self.base_url, **request})
            for request in requests
        ]
        results: dict[int, Any] = {}
        futures: dict[Future, int] = {}
        for index, key in enumerate(keyed):
            cached = self.cache.get(key)
            found = _read_or_none(read, cached) if cached is not None else None
            if found is not None:
                results[index] = found[0]
                with self._lock:
                    self.usage.cached += 1
            else:
                futures[self._pool.submit(self._send_and_keep, requests[index], key, read)] = index
        pending = set(futures)
        failure: BaseException | None = None
        while pending:
            try:
                finished, pending = wait(pending, return_when=FIRST_EXCEPTION)
            except BaseException:  # Ctrl-C: send nothing more; the replies in flight still reach the cache
                for future in pending:
                    future.cancel()
                raise
            for future in finished:
                if future.exception() is None:
                    results[futures[future]] = future.result()
                elif failure is None:
                    failure = future.exception()
            if failure is not None:
                for future in pending:
                    future.cancel()  # not started: never sent
                wait(pending)
                for future in pending:
                    if not future.cancelled() and future.exception() is None:
                        results[futures[future]] = future.result()
                break
        if failure is not None:
            raise BatchFailed(self._diagnostic(failure), results)
        return [results[index] for index in range(len(requests))]

    def _send_and_keep(self, request: dict[str, Any], key: str, read: Callable[[dict[str, Any]], Any]) -> Any:
        """Send with retries until a response reads; it is in the cache file before anyone counts it.
        A server fault (:class:`ServerFault`) is retried and neither kept nor counted."""
        tenacity = optional_import("tenacity", "api")

        def attempt() -> tuple[dict[str, Any], Any, tuple[int, int]]:
            with self._lock:
                self.usage.requests += 1
            response = self.send(request)
            return response, read(response), self.tokens_of(response)

        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception(self._transient),
            wait=self._wait,
            stop=tenacity.stop_after_attempt(max(1, self.options.max_attempts)),
            before_sleep=self._count_retry,
            reraise=True,
        )
        response, result, (inputs, outputs) = retrying(attempt)
        self.cache.put(key, response)
        model, version = self.server_of(response)
        with self._lock:
            self.usage.replies += 1
            self.usage.input_tokens += inputs
            self.usage.output_tokens += outputs
            self.server_model = model or self.server_model
            self.server_version = version or self.server_version
        return result

    def _count_retry(self, state: Any) -> None:
        with self._lock:
            self.usage.retries += 1

    def _transient(self, error: BaseException) -> bool:
        if isinstance(error, (ServerFault, *self.connection_errors)):
            return True
        status = getattr(error, "status_code", None)
        return status in RETRY_STATUSES and not _is_quota(error) and _retry_after(error) is not False

    def _wait(self, state: Any) -> float:
        """``Retry-After`` when the server sent one, else exponential backoff with jitter."""
        import random

        error = state.outcome.exception() if state.outcome else None
        asked = _retry_after(error) if error is not None else None
        if isinstance(asked, float):
            return asked
        base = self.options.backoff_seconds * (2 ** (state.attempt_number - 1))
        return min(60.0, base) * (0.5 + random.random() / 2)

    def _diagnostic(self, error: BaseException) -> Diagnostic:
        if isinstance(error, DiagnosticError):  # e.g. a server that returns no log-probabilities (EV306)
            return error.diagnostics[0]
        if isinstance(error, ServerFault):
            return Diagnostic(
                "EV309",
                redact(
                    f"the {self.name} server's reply was not an answer {self.options.max_attempts} time(s) "
                    f"in a row: {error}",
                    self.secret,
                ),
                hint="this reply was neither kept nor counted; check --base-url (the server may not speak "
                "this API) and the server's logs, then run the same command again to send only the "
                "missing requests",
            )
        status = getattr(error, "status_code", None)
        if status is None and not isinstance(error, self.connection_errors):
            return unexpected(self.service, "sending a request", error, self.secret)
        what = f"HTTP {status}" if status is not None else type(error).__name__
        detail = redact(_error_message(error), self.secret)
        if _is_quota(error) or _retry_after(error) is False:
            return Diagnostic(
                "EV304",
                f"the {self.name} server refused for lack of quota or credit ({what}: {detail})",
                hint="add quota and run the same command again — only the missing requests are sent",
            )
        if status is not None and status not in RETRY_STATUSES:
            return Diagnostic(
                "EV305",
                f"the {self.name} server rejected a request ({what}: {detail})",
                hint="check --model, --base-url and the key",
            )
        return Diagnostic(
            "EV303",
            f"a request to the {self.name} server still failed after {self.options.max_attempts} "
            f"attempts ({what}: {detail})",
            hint="run the same command again to send only the missing requests",
        )


def _read_or_none(read: Callable[[dict[str, Any]], Any], response: Any) -> tuple[Any] | None:
    """``(read(response),)``, or None when a cached response does not read (it is then asked again)."""
    try:
        return (read(response),)
    except (ServerFault, DiagnosticError, AttributeError, TypeError, KeyError, IndexError, ValueError):
        return None


def _status_headers(error: BaseException) -> dict[str, str]:
    response = getattr(error, "response", None)
    headers = getattr(response, "headers", None)
    return {k.lower(): v for k, v in headers.items()} if headers is not None else {}


def _retry_after(error: BaseException) -> float | bool | None:
    """Seconds the server asked to wait; False when it asks for longer than a rate limit lasts."""
    headers = _status_headers(error)
    value: float | None = None
    try:
        if "retry-after-ms" in headers:
            value = float(headers["retry-after-ms"]) / 1000
        elif "retry-after" in headers:
            value = float(headers["retry-after"])
    except ValueError:
        from email.utils import parsedate_to_datetime

        try:
            import time

            value = max(0.0, parsedate_to_datetime(headers["retry-after"]).timestamp() - time.time())
        except (TypeError, ValueError):
            value = None
    if value is None:
        return None
    return False if value > MAX_RETRY_AFTER else max(0.0, value)


def _is_quota(error: BaseException) -> bool:
    text = json.dumps(getattr(error, "body", None) or "", default=str).lower()
    return any(code in text for code in QUOTA_CODES)


def _error_message(error: BaseException) -> str:
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])[:200]
    return (str(error).splitlines() or [type(error).__name__])[0][:200]
