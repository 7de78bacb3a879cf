"""Server faults: a 200 that is not an answer is retried like a 5xx, never kept in the request cache and
never scored — for every way the fake server can spoil a reply (``fake_api.MALFORMED``, ``RAW_FAULTS``),
through the real openai and anthropic clients."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from jbcompile.cli import app
from jbcompile.diagnostics import DiagnosticError
from jbcompile.evaluate.requests import EvalRequest
from jbcompile.evaluate.run import run_eval
from typer.testing import CliRunner

from tests.eval.fake_api import EMPTY_ANSWERS, MALFORMED, RAW_FAULTS, eval_request, expected_answer

KEY = "sk-faults-0123456789abcdef"
ROWS = 6  # --limit: each case is a short run


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


# (fault, backend, chat, scoring): every spoilt reply, on the endpoints it applies to
CASES = [
    *[(fault, "openai", False, "generate") for fault in MALFORMED if not fault.startswith("anthropic")],
    *[(fault, "openai", False, "generate") for fault in RAW_FAULTS],
    *[
        (f, "openai", True, "generate")
        for f in ("null_message", "no_content", "null_content", "content_int", "content_list")
    ],
    ("logprob_string", "openai", False, "logprob"),
    ("logprob_string", "openai", True, "logprob"),
    ("choice_not_object", "openai", True, "logprob"),
    *[(fault, "anthropic", True, "generate") for fault in MALFORMED if fault.startswith("anthropic")],
    ("usage_string", "anthropic", True, "generate"),
    ("usage_nan", "anthropic", True, "generate"),
    ("truncated", "anthropic", True, "generate"),
    ("not_json", "anthropic", True, "generate"),
]
# faults that only some endpoints can show (the others skip them above)
NOT_ON_COMPLETIONS = {
    "null_message",
    "no_content",
    "null_content",
    "content_int",
    "content_list",
    "logprob_string",
}


def request(build: Path, out: Path, url: str, backend: str, chat: bool, scoring: str, **opts) -> EvalRequest:
    return eval_request(
        build, out, url, backend, chat=chat, scoring=scoring, concurrency=2, limit=ROWS, **opts
    )


def cached(out: Path) -> list[dict]:
    path = out / "requests.jsonl"
    return (
        [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []
    )


@pytest.mark.parametrize(
    ("fault", "backend", "chat", "scoring"),
    [case for case in CASES if not (case[0] in NOT_ON_COMPLETIONS and not case[2] and case[3] == "generate")],
)
def test_a_spoilt_reply_is_retried_never_kept_and_never_scored(
    build_dir: Path, tmp_path: Path, api, fault: str, backend: str, chat: bool, scoring: str
) -> None:
    api.state.faults = [fault]  # the first request gets it, the retry a good reply
    out = tmp_path / "run"
    results = run_eval(request(build_dir, out, api.url, backend, chat, scoring)).results.to_json()
    records = [
        json.loads(line) for line in (out / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert len(records) == results["dataset"]["evaluated"] == ROWS
    # no wrong answer: every prediction is the server's answer to a prompt it got
    assert Counter(r["pred"] for r in records) == Counter(expected_answer(p) for p in api.state.received)
    assert sorted(api.state.received.values()) == [1] * (ROWS - 1) + [2]  # the spoilt one was asked again
    usage = results["backend"]["usage"]
    assert usage["replies"] == ROWS and usage["retries"] >= 1
    assert usage["input_tokens"] >= 0 and isinstance(usage["input_tokens"], int)
    kept = [json.dumps(entry["response"], sort_keys=True) for entry in cached(out)]
    assert len(kept) == ROWS  # one good reply per request; the spoilt one never reached the cache
    assert not {json.dumps(body, sort_keys=True) for body in api.state.spoilt} & set(kept)


@pytest.mark.parametrize(
    ("fault", "backend", "chat"),
    [
        ("empty_choices", "openai", False),
        ("usage_string", "openai", True),
        ("null_content", "openai", True),
        ("anthropic_no_content", "anthropic", True),
        ("anthropic_empty_content", "anthropic", True),
    ],
)
def test_a_server_that_only_answers_faults_stops_with_ev309_and_counts_nothing(
    build_dir: Path, tmp_path: Path, api, fault: str, backend: str, chat: bool
) -> None:
    api.state.sticky = fault
    out = tmp_path / "run"
    with pytest.raises(DiagnosticError) as stopped:
        run_eval(request(build_dir, out, api.url, backend, chat, "generate", max_attempts=2))
    (diagnostic,) = stopped.value.diagnostics
    assert diagnostic.code == "EV309" and "2 time(s)" in diagnostic.message
    assert not (out / "predictions.jsonl").exists() and cached(out) == []  # nothing scored, nothing kept
    assert stopped.value.kept == "nothing was written"


@pytest.mark.parametrize("empty", sorted(EMPTY_ANSWERS))
def test_a_reply_without_text_that_says_why_is_the_models_answer_kept_once(
    build_dir: Path, tmp_path: Path, api, empty: str
) -> None:
    """No text for a reason the reply gives (the token limit, a refusal, a content filter, reasoning only):
    the model's out-of-choice answer — scored, kept, and not asked again by a rerun."""
    backend = "anthropic" if empty.startswith("anthropic") else "openai"
    api.state.faults = [empty]
    out = tmp_path / "run"
    results = run_eval(request(build_dir, out, api.url, backend, True, "generate")).results.to_json()
    assert sorted(api.state.received.values()) == [1] * ROWS  # nothing asked twice
    records = [json.loads(line) for line in (out / "predictions.jsonl").read_text("utf-8").splitlines()]
    assert [r["pred"] for r in records].count(None) == 1 and results["backend"]["usage"]["retries"] == 0
    assert len(cached(out)) == ROWS
    run_eval(request(build_dir, out, api.url, backend, True, "generate"))  # resumed: all kept
    assert api.state.requests == ROWS


def test_replies_kept_by_an_older_version_that_do_not_read_are_asked_again(
    build_dir: Path, tmp_path: Path, api
) -> None:
    out = tmp_path / "run"
    run_eval(request(build_dir, out, api.url, "openai", False, "generate"))
    # an older version kept 200s without choices: they would be read as out-of-choice answers
    lines = [
        json.dumps({"key": entry["key"], "response": {**entry["response"], "choices": []}})
        for entry in cached(out)
    ]
    (out / "requests.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    again = request(build_dir, out, api.url, "openai", False, "generate")
    again.overwrite = True
    results = run_eval(again).results.to_json()
    assert results["backend"]["usage"]["cached"] == 0 and results["backend"]["usage"]["replies"] == ROWS
    assert results["metrics"]["overall"]["ooc_ratio"] == 0.0  # answers, not out-of-choice
    assert all(count == 2 for count in api.state.received.values())


def test_the_cli_says_what_was_kept_when_faults_stop_a_run_half_way(
    build_dir: Path, tmp_path: Path, api
) -> None:
    api.state.sticky, api.state.sticky_after = "usage_string", 3
    out = tmp_path / "run"
    args = ["eval", "-m", "fake-model", "-d", str(build_dir), "--out", str(out), "--backend", "openai",
            "--base-url", api.url + "/v1", "--max-attempts", "2", "--scoring", "generate", "--quiet",
            "--concurrency", "1", "--limit", str(ROWS)]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and "EV309" in result.output, result.output
    assert "nothing was written" not in result.output
    text = " ".join(result.output.split())
    assert f"{out / 'predictions.jsonl'} (3 predictions, 3 new)" in text
    assert f"{out / 'requests.jsonl'} (3 server replies, 3 new)" in text
    assert "run the same command again to resume" in text
    assert len(cached(out)) == 3
    api.state.sticky = None
    before = api.state.requests
    rerun = CliRunner().invoke(app, args)
    assert rerun.exit_code == 0, rerun.output
    assert api.state.requests - before == ROWS - 3  # only the missing requests are sent again
