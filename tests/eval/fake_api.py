"""A loopback server speaking enough of the OpenAI and Anthropic APIs to drive their real clients, with
faults on demand: 429 with Retry-After, 500, a dropped connection, a slow reply, a quota error — and
*malformed* replies (``MALFORMED``): a 200 whose body is not an answer in one of the ways a server can
get it wrong (no choices, a null message, content of the wrong type, a body cut short or not JSON, an
error in a 200, usage counts that are not counts, a connection dropped in the middle of the body …).

Its replies are a pure function of the prompt (``expected_answer``), so a test knows every right answer;
it counts the requests it received per prompt, so a test knows what was sent (and paid) twice.
"""

from __future__ import annotations

import hashlib
import json
import socket
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAULTS = ("rate_limit", "server_error", "drop", "slow", "quota", "auth")
# Each: how a well-formed 200 body is spoilt (``body`` is the JSON object the endpoint would answer).
MALFORMED: dict[str, Any] = {
    # OpenAI-compatible (chat and completions)
    "empty_choices": lambda body: {**body, "choices": []},
    "no_choices": lambda body: {k: v for k, v in body.items() if k != "choices"},
    "choices_not_list": lambda body: {**body, "choices": "0"},
    "choice_not_object": lambda body: {**body, "choices": [None]},
    "null_message": lambda body: _choice(body, message=None) if "message" in body["choices"][0] else None,
    "no_content": lambda body: _message(body, drop="content"),
    "null_content": lambda body: _message(body, content=None),  # finish_reason "stop": says no why
    "content_int": lambda body: _message(body, content=1) if "message" in body["choices"][0] else None,
    "content_list": lambda body: _message(body, content=[{"type": "text", "text": "0"}]),
    "text_missing": lambda body: _choice(body, drop="text") if "text" in body["choices"][0] else None,
    "logprob_string": lambda body: _spoil_logprobs(body),
    "error_in_200": lambda body: {"error": {"message": "the model is overloaded", "type": "server_error"}},
    "usage_string": lambda body: {**body, "usage": {**body["usage"], _input(body): "many"}},
    "usage_negative": lambda body: {**body, "usage": {**body["usage"], _input(body): -5}},
    "usage_nan": lambda body: {**body, "usage": {**body["usage"], _input(body): float("nan")}},
    "usage_fraction": lambda body: {**body, "usage": {**body["usage"], _input(body): 2.5}},
    "usage_not_object": lambda body: {**body, "usage": "lots"},
    # Anthropic
    "anthropic_no_content": lambda body: {k: v for k, v in body.items() if k != "content"},
    "anthropic_empty_content": lambda body: {**body, "content": []},  # stop_reason "end_turn"
    "anthropic_content_string": lambda body: {**body, "content": "0"},
    "anthropic_block_without_type": lambda body: {**body, "content": [{"text": "0"}]},
    "anthropic_text_not_string": lambda body: {**body, "content": [{"type": "text", "text": 0}]},
    "anthropic_error_type": lambda body: {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "x"},
    },
}
# Replies without text that say why (the token limit, a refusal, a content filter, a tool call): the
# model's own out-of-choice answers, not faults. Each: how a well-formed 200 body becomes one.
EMPTY_ANSWERS: dict[str, Any] = {
    "null_content_length": lambda body: _choice(_message(body, content=None) or body, finish_reason="length"),
    "null_content_refusal": lambda body: _message(body, content=None, refusal="I will not choose."),
    "null_content_filtered": lambda body: _choice(
        _message(body, content=None) or body, finish_reason="content_filter"
    ),
    "null_content_reasoning": lambda body: _message(body, content=None, reasoning_content="thinking…"),
    "anthropic_refusal": lambda body: {**body, "content": [], "stop_reason": "refusal"},
    "anthropic_max_tokens": lambda body: {**body, "content": [], "stop_reason": "max_tokens"},
}
# Faults of the transport rather than of the JSON (a 200 each time).
RAW_FAULTS = ("truncated", "not_json", "json_list", "json_null", "drop_mid_body")


def _choice(body: dict[str, Any], drop: str | None = None, **fields: Any) -> dict[str, Any]:
    choice = {k: v for k, v in body["choices"][0].items() if k != drop} | fields
    return {**body, "choices": [choice]}


def _message(body: dict[str, Any], drop: str | None = None, **fields: Any) -> dict[str, Any] | None:
    if "message" not in body["choices"][0]:
        return None
    message = {k: v for k, v in body["choices"][0]["message"].items() if k != drop} | fields
    return _choice(body, message=message)


def _spoil_logprobs(body: dict[str, Any]) -> dict[str, Any] | None:
    logprobs = body["choices"][0].get("logprobs")
    if not logprobs:
        return None
    if "content" in logprobs:  # chat
        first = dict(logprobs["content"][0])
        first["top_logprobs"] = [{**entry, "logprob": "high"} for entry in first["top_logprobs"]]
        return _choice(body, logprobs={"content": [first]})
    return _choice(
        body, logprobs={**logprobs, "top_logprobs": [dict.fromkeys(logprobs["top_logprobs"][0], "high")]}
    )


def _input(body: dict[str, Any]) -> str:
    return "input_tokens" if "input_tokens" in body["usage"] else "prompt_tokens"


def expected_answer(prompt: str) -> int:
    """The option the fake model picks for a prompt: stable, and spread over 0, 1, 2."""
    return int(hashlib.sha256(prompt.encode()).hexdigest(), 16) % 3


def prompt_of(body: dict[str, Any]) -> str:
    if "prompt" in body:
        return str(body["prompt"])
    return "\n".join(str(m.get("content")) for m in body.get("messages", []))


@dataclass
class FakeState:
    """What the server does and what it saw; tests change ``faults`` between runs."""

    faults: list[str] = field(default_factory=list)  # consumed one per request, in arrival order
    sticky: str | None = None  # a fault answered to every request (e.g. "quota" until refilled)
    sticky_after: int = 0  # ... once this many requests have been received
    latency: float = 0.0  # seconds before every reply
    slow_seconds: float = 3.0
    thinking: str | None = None  # None | "inline" (<think> in the text) | "field" (reasoning_content)
    logprobs: bool = True
    # the top_logprobs hold other tokens than the option labels (a tiny model behind ``vllm serve``):
    # every row is then out of choice
    labels_in_top: bool = True
    # cut a reply at the request's max_tokens (one character a token) with finish_reason "length", as a
    # server does; off by default: most tests script replies whatever the limit
    token_limit: bool = False
    received: Counter = field(default_factory=Counter)  # prompt -> requests received
    headers_seen: list[dict[str, str]] = field(default_factory=list)
    bodies: list[dict[str, Any]] = field(default_factory=list)
    spoilt: list[Any] = field(default_factory=list)  # the malformed bodies it answered
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def requests(self) -> int:
        return sum(self.received.values())

    def next_fault(self, number: int) -> str | None:
        with self.lock:
            if self.sticky and number > self.sticky_after:
                return self.sticky
            return self.faults.pop(0) if self.faults else None


def _answer_text(prompt: str, state: FakeState) -> tuple[str, str | None]:
    answer = f"{expected_answer(prompt)}\n"
    if state.thinking == "inline":
        # the thinking names another option on its first line: a parser reading it would be wrong
        return (
            f"<think>\n{(expected_answer(prompt) + 1) % 3}\nlet me think ### again\n</think>\n\n{answer}",
            None,
        )
    if state.thinking == "field":
        return answer, f"{(expected_answer(prompt) + 1) % 3}\nthinking first"
    return answer, None


class _Handler(BaseHTTPRequestHandler):
    state: FakeState
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body leave at once, as a real server sends them

    def log_message(self, *args: Any) -> None:  # quiet
        return

    def do_POST(self) -> None:  # noqa: N802 - the http.server API
        length = int(self.headers.get("content-length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        state = self.state
        prompt = prompt_of(body)
        with state.lock:
            state.received[prompt] += 1
            state.headers_seen.append(dict(self.headers))
            state.bodies.append(body)
            number = sum(state.received.values())
        fault = state.next_fault(number)
        if state.latency:
            time.sleep(state.latency)
        if fault == "drop":
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
            return
        if fault == "slow":
            time.sleep(state.slow_seconds)
        if fault == "rate_limit":
            return self._json(
                429, {"error": {"message": "slow down", "type": "rate_limit"}}, {"retry-after": "0"}
            )
        if fault == "server_error":
            return self._json(500, {"error": {"message": "internal", "type": "server_error"}})
        if fault == "quota":
            return self._json(
                429,
                {"error": {"message": "You exceeded your current quota", "code": "insufficient_quota"}},
            )
        if fault == "auth":
            key = self.headers.get("authorization") or self.headers.get("x-api-key") or ""
            return self._json(401, {"error": {"message": f"Incorrect API key provided: {key[-20:]}"}})
        if fault == "echo_headers":  # a server that shows every header it got (keys, Basic auth) in a 401
            return self._json(401, {"error": {"message": f"denied: {dict(self.headers)}"}})
        if self.path.endswith("/messages"):
            answer = self._anthropic(body, prompt)
        elif self.path.endswith("/chat/completions"):
            answer = self._chat(body, prompt)
        else:
            answer = self._completion(body, prompt)
        if fault == "echo_in_reply":  # a 200 whose answer is every header it got (a key, Basic auth)
            echoed = json.dumps(dict(self.headers))
            if "choices" in answer:
                answer = _message(answer, content=echoed) or _choice(answer, text=echoed)
            else:
                answer = {**answer, "content": [{"type": "text", "text": echoed}]}
        if fault in MALFORMED:
            spoilt = MALFORMED[fault](answer)
            if spoilt is None:
                raise ValueError(f"fault {fault!r} does not apply to {self.path}")
            answer = spoilt
            self.state.spoilt.append(spoilt)
        if fault in EMPTY_ANSWERS:
            answer = EMPTY_ANSWERS[fault](answer)
        if fault in RAW_FAULTS:
            return self._raw_fault(fault, json.dumps(answer).encode())
        return self._json(200, answer)

    def _raw_fault(self, fault: str, data: bytes) -> None:
        """A 200 whose body is cut short, is not JSON, is JSON but no object, or stops mid-way."""
        body = {
            "truncated": data[: len(data) // 2],
            "not_json": b"<html><body>502 Bad Gateway</body></html>",
            "json_list": b"[1, 2, 3]",
            "json_null": b"null",
            "drop_mid_body": data[:20],
        }[fault]
        self.send_response(200)
        self.send_header("content-type", "text/html" if fault == "not_json" else "application/json")
        self.send_header("content-length", str(len(data) if fault == "drop_mid_body" else len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()
        if fault == "drop_mid_body":  # fewer bytes than announced, then the connection goes
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True

    def _top(self, prompt: str) -> dict[str, float]:
        if not self.state.labels_in_top:
            return {"The": -0.4, "\n": -1.5, "x": -5.0}
        best = expected_answer(prompt)
        return {str(i): (-0.1 if i == best else -2.0 - i) for i in range(3)} | {"x": -5.0}

    def _completion(self, body: dict[str, Any], prompt: str) -> dict[str, Any]:
        text, _ = _answer_text(prompt, self.state)
        limit, finish = body.get("max_tokens"), "stop"
        if self.state.token_limit and isinstance(limit, int) and len(text) > limit:
            text, finish = text[:limit], "length"
        choice: dict[str, Any] = {"index": 0, "text": text, "finish_reason": finish, "logprobs": None}
        if body.get("logprobs") and self.state.logprobs:
            top = self._top(prompt)
            first = max(top, key=top.__getitem__)
            choice["text"] = first
            choice["logprobs"] = {
                "tokens": [first],
                "token_logprobs": [top[first]],
                "top_logprobs": [top],
                "text_offset": [0],
            }
        return {
            "id": "cmpl-1",
            "object": "text_completion",
            "created": 0,
            "model": body.get("model"),
            "system_fingerprint": "fake-1.0",
            "choices": [choice],
            "usage": {"prompt_tokens": len(prompt), "completion_tokens": len(text), "total_tokens": 0},
        }

    def _chat(self, body: dict[str, Any], prompt: str) -> dict[str, Any]:
        text, reasoning = _answer_text(prompt, self.state)
        limit = body.get("max_completion_tokens") or body.get("max_tokens")
        finish = "stop"
        if self.state.token_limit and isinstance(limit, int) and len(text) > limit:
            text, finish = text[:limit], "length"
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if reasoning is not None:
            message["reasoning_content"] = reasoning
        choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
        if body.get("logprobs") and self.state.logprobs:
            top = self._top(prompt)
            first = max(top, key=top.__getitem__)
            message["content"] = first
            entries = [{"token": t, "logprob": v, "bytes": None} for t, v in top.items()]
            choice["logprobs"] = {
                "content": [{"token": first, "logprob": top[first], "bytes": None, "top_logprobs": entries}]
            }
        return {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model"),
            "system_fingerprint": "fake-1.0",
            "choices": [choice],
            "usage": {"prompt_tokens": len(prompt), "completion_tokens": len(text), "total_tokens": 0},
        }

    def _anthropic(self, body: dict[str, Any], prompt: str) -> dict[str, Any]:
        answer = f"{expected_answer(prompt)}\n"
        content: list[dict[str, Any]] = []
        if body.get("thinking"):
            content.append(
                {"type": "thinking", "thinking": f"{(expected_answer(prompt) + 2) % 3}?", "signature": "s"}
            )
        content.append({"type": "text", "text": answer})
        return {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": content,
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": len(prompt), "output_tokens": len(answer)},
        }

    def _json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up waiting (a slow reply): nothing to answer


class FakeAPI:
    """``with FakeAPI() as api:`` a server on 127.0.0.1; ``api.url`` is its base, ``api.state`` its script."""

    def __init__(self, state: FakeState | None = None):
        self.state = state or FakeState()
        handler = type("Handler", (_Handler,), {"state": self.state})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeAPI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def _serve(latency: float, ports: Any) -> None:
    with FakeAPI(FakeState(latency=latency)) as api:
        ports.put(api.server.server_address[1])
        api._thread.join()


def serve_in_another_process(latency: float) -> tuple[str, Any]:
    """The fake server in a process of its own (benchmarks: the client then has the GIL to itself).
    Returns its URL and the process (``terminate()`` it)."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    ports = context.Queue()
    process = context.Process(target=_serve, args=(latency, ports), daemon=True)
    process.start()
    return f"http://127.0.0.1:{ports.get(timeout=60)}", process


def eval_request(
    build: Any, out: Any, url: str, backend: str = "openai", *, chat: bool = False, **opts: Any
) -> Any:
    """An eval request against the fake at ``url``: generation by default, short retries and timeouts."""
    from jbcompile.evaluate.backends import BackendOptions
    from jbcompile.evaluate.kind import EvalOptions
    from jbcompile.evaluate.requests import EvalRequest

    scoring = opts.pop("scoring", "generate")
    thinking = opts.pop("thinking", False)
    samples = opts.pop("samples", 1)
    limit = opts.pop("limit", None)
    base = url + "/v1" if backend == "openai" else url
    options = {"concurrency": 8, "backoff_seconds": 0.01, "timeout": 5.0, **opts}
    return EvalRequest(
        model="fake-model",
        dataset=str(build),
        out=out,
        options=EvalOptions(scoring=scoring, chat=chat),
        bootstrap=20,
        limit=limit,
        backend=backend,
        backend_options=BackendOptions(base_url=base, **options),
        thinking=thinking,
        samples=samples,
    )
