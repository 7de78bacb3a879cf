"""The openai and anthropic backends through their real clients against a loopback server with faults:
nothing lost, nothing sent twice, every reply kept before a stop, no key anywhere."""

from __future__ import annotations

import json
import logging
import socket
from collections import Counter
from pathlib import Path

import pytest
from jbcompile.cli import app
from jbcompile.diagnostics import DiagnosticError
from jbcompile.evaluate.backends import SamplingConfig, as_reply, final_answer_test
from jbcompile.evaluate.parsing import first_line_ended
from jbcompile.evaluate.prompting import prompt_hash
from jbcompile.evaluate.run import run_eval
from typer.testing import CliRunner

from tests.eval.fake_api import FakeAPI, eval_request, expected_answer

SECRET = "sk-test-DO-NOT-LEAK-0123456789"


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)


def records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "predictions.jsonl").read_text(encoding="utf-8").splitlines()]


def assert_exact(out: Path, api: FakeAPI) -> list[dict]:
    """One record per row, each the server's answer to exactly the prompt the row was run as."""
    rows = records(out)
    assert len({r["example_id"] for r in rows}) == len(rows)
    by_hash = {prompt_hash(prompt): expected_answer(prompt) for prompt in api.state.received}
    assert [r["pred"] for r in rows] == [by_hash[r["prompt_hash"]] for r in rows]
    return rows


def test_faults_are_retried_and_nothing_is_lost_or_sent_twice(build_dir: Path, tmp_path: Path, api) -> None:
    faults = ["rate_limit", "server_error", "drop", "slow", "rate_limit", "server_error"]
    api.state.faults = list(faults)
    api.state.slow_seconds = 1.5
    results = run_eval(eval_request(build_dir, tmp_path / "run", api.url, timeout=0.5)).results.to_json()
    rows = assert_exact(tmp_path / "run", api)
    n = results["dataset"]["evaluated"]
    assert len(rows) == n
    # every prompt answered once, plus one request per fault
    assert api.state.requests == n + len(faults)
    assert sum(count - 1 for count in api.state.received.values()) == len(faults)
    usage = results["backend"]["usage"]
    # attempts as the client counts them: a retry may also meet a connection the server had closed
    assert usage["retries"] >= len(faults) and usage["requests"] == n + usage["retries"]
    assert {k: v for k, v in usage.items() if k not in ("requests", "retries")} == {
        "replies": n,
        "cached": 0,
        "input_tokens": sum(len(prompt) for prompt in api.state.received),  # replies only, not refusals
        "output_tokens": 2 * n,
    }
    assert results["backend"]["server_model"] == "fake-model"
    assert results["backend"]["server_version"] == "fake-1.0"
    assert results["backend"]["base_url"] == api.url + "/v1"


def test_a_quota_error_stops_keeping_every_reply_and_a_rerun_sends_only_the_missing(
    build_dir: Path, tmp_path: Path, api
) -> None:
    out = tmp_path / "run"
    api.state.sticky, api.state.sticky_after = "quota", 10
    with pytest.raises(DiagnosticError) as stopped:
        run_eval(eval_request(build_dir, out, api.url))
    (diagnostic,) = stopped.value.diagnostics
    assert diagnostic.code == "EV304" and diagnostic.path == str(out / "predictions.jsonl")
    assert len(records(out)) == 10  # every paid reply is kept
    refused = api.state.requests - 10
    api.state.sticky = None
    before = api.state.requests
    results = run_eval(eval_request(build_dir, out, api.url)).results.to_json()
    n = results["dataset"]["evaluated"]
    assert api.state.requests - before == n - 10  # only the missing requests
    assert_exact(out, api)
    assert sum(count - 1 for count in api.state.received.values()) == refused  # only refused ones twice
    # a third run, and a run with --overwrite, send nothing: the request cache has every reply
    before = api.state.requests
    run_eval(eval_request(build_dir, out, api.url))
    again = eval_request(build_dir, out, api.url)
    again.overwrite = True
    results = run_eval(again).results.to_json()
    assert api.state.requests == before
    assert results["backend"]["usage"]["cached"] == n and results["backend"]["usage"]["requests"] == 0
    assert_exact(out, api)


def test_retries_are_bounded_and_the_finished_replies_are_kept(build_dir: Path, tmp_path: Path, api) -> None:
    api.state.sticky, api.state.sticky_after = "server_error", 5
    with pytest.raises(DiagnosticError) as stopped:
        run_eval(eval_request(build_dir, tmp_path / "run", api.url, max_attempts=3))
    assert stopped.value.diagnostics[0].code == "EV303"
    assert "3 attempts" in stopped.value.diagnostics[0].message
    assert len(records(tmp_path / "run")) == 5


def test_a_server_that_never_answers_leaves_nothing_and_says_what_was_kept(
    build_dir: Path, tmp_path: Path, api
) -> None:
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{closed.getsockname()[1]}"

    def cli(url: str, out: Path) -> tuple[int, str]:
        args = ["eval", "-m", "fake-model", "-d", str(build_dir), "--out", str(out), "--backend", "openai"]
        args += ["--base-url", url + "/v1", "--max-attempts", "1", "--scoring", "generate", "--quiet"]
        result = CliRunner().invoke(app, args)
        return result.exit_code, result.output

    code, output = cli(dead, tmp_path / "dead")
    assert code == 2 and "EV303" in output and "nothing was written" in output
    assert not (tmp_path / "dead").exists()
    api.state.sticky, api.state.sticky_after = "server_error", 5
    code, output = cli(api.url, tmp_path / "half")
    assert code == 2 and "EV303" in output and "nothing was written" not in output
    assert "kept" in output and "predictions.jsonl" in output and len(records(tmp_path / "half")) == 5


def test_overwrite_keeps_the_earlier_run_until_the_new_results_are_written(
    build_dir: Path, tmp_path: Path, api
) -> None:
    out = tmp_path / "run"
    run_eval(eval_request(build_dir, out, api.url))
    earlier = {name: (out / name).read_bytes() for name in ("run.json", "predictions.jsonl", "results.json")}
    api.state.sticky, api.state.sticky_after = "server_error", api.state.requests + 5
    again = eval_request(build_dir, out, api.url, chat=True, max_attempts=1)  # not in the request cache
    again.overwrite = True
    with pytest.raises(DiagnosticError) as stopped:
        run_eval(again)
    assert stopped.value.diagnostics[0].code == "EV303"
    assert {name: (out / name).read_bytes() for name in earlier} == earlier
    api.state.sticky = None
    results = run_eval(again).results.to_json()
    assert results["prompt"]["chat"] and json.loads(earlier["run.json"])["options"]["chat"] is False
    assert json.loads((out / "run.json").read_text(encoding="utf-8"))["options"]["chat"] is True
    old_hashes = {json.loads(line)["prompt_hash"] for line in earlier["predictions.jsonl"].splitlines()}
    assert len(records(out)) == results["dataset"]["evaluated"]
    assert not old_hashes & {r["prompt_hash"] for r in records(out)}  # only the new run's rows
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == []


def test_chat_completions_and_logprob_scoring(build_dir: Path, tmp_path: Path, api) -> None:
    results = run_eval(eval_request(build_dir, tmp_path / "chat", api.url, chat=True)).results.to_json()
    preds = Counter(r["pred"] for r in records(tmp_path / "chat"))
    assert preds == Counter(expected_answer(p) for p in api.state.received)
    assert results["prompt"]["chat"] is True
    for chat in (False, True):
        out = tmp_path / f"logprob-{chat}"
        run_eval(eval_request(build_dir, out, api.url, chat=chat, scoring="logprob"))
        rows = records(out)
        assert all(r["option_logprobs"][r["pred"]] == -0.1 for r in rows)
    assert_exact(tmp_path / "logprob-False", api)


@pytest.mark.parametrize("chat", [False, True])
def test_a_logprob_run_whose_labels_are_never_among_the_top_tokens_warns(
    build_dir: Path, tmp_path: Path, api, chat: bool
) -> None:
    """A server lists only its top tokens: a tiny model behind ``vllm serve`` puts other words first, so
    every row is out of choice. The run says so (EV056, with --top-logprobs to raise) and keeps it with
    its figures — results.json, report.md, compare's mark —, as it keeps EV054/EV055."""
    api.state.labels_in_top = False
    out = tmp_path / "none"
    args = ["eval", "-m", "fake-model", "-d", str(build_dir), "--backend", "openai", "--base-url",
            api.url + "/v1", "--scoring", "logprob", "--top-logprobs", "5", "--bootstrap", "0"]  # fmt: skip
    args += ["--chat"] * chat
    result = CliRunner().invoke(app, [*args, "--out", str(out)])
    flat = " ".join(result.output.split())
    assert result.exit_code == 0, result.output
    assert all(r["option_logprobs"] == [None, None, None] and r["pred"] is None for r in records(out))
    assert "EV056" in flat and "among the server's top 5 log-probabilities" in flat, result.output
    assert "--top-logprobs" in flat
    (kept,) = json.loads((out / "results.json").read_text("utf-8"))["warnings"]
    assert kept["code"] == "EV056" and "--top-logprobs" in kept["hint"]
    assert f"`EV056` {kept['message']}" in (out / "report.md").read_text("utf-8")
    api.state.labels_in_top = True
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "labelled")])
    assert result.exit_code == 0 and "EV056" not in result.output, result.output
    assert "warnings" not in json.loads((tmp_path / "labelled" / "results.json").read_text("utf-8"))
    compared = tmp_path / "cmp"
    result = CliRunner().invoke(
        app, ["compare", str(out), str(tmp_path / "labelled"), "-o", str(compared), "--bootstrap", "0"]
    )
    assert result.exit_code == 0, result.output
    runs = json.loads((compared / "compare.json").read_text("utf-8"))["runs"]
    assert [[w["code"] for w in run["warnings"]] for run in runs] == [["EV056"], []]


def test_ev056_needs_more_than_half_of_the_rows_without_a_label() -> None:
    from jbcompile.evaluate.run import run_warnings, unlabelled_warning

    def rows(missing: int, total: int) -> list[dict]:
        return [
            {"option_logprobs": [None, None, None] if i < missing else [-0.1, None, None]}
            for i in range(total)
        ]

    assert unlabelled_warning(rows(2, 4), 20) is None
    warned = unlabelled_warning(rows(3, 4), 20)
    assert warned is not None and warned.message.startswith("3 of the 4 rows")
    assert unlabelled_warning([{"option_logprobs": None, "pred": None}] * 4) is None  # generated rows
    assert [w.code for w in run_warnings(rows(4, 4), False, None, top_logprobs=20)] == ["EV056"]


def test_a_base_url_with_a_query_is_refused_without_showing_it(build_dir: Path, tmp_path: Path, api) -> None:
    """``--base-url 'http://host/v1?api_token=…'``: the client appends each request's path to the whole
    URL, so the query stood before it (HTTP 404). Refused before anything is sent (EV308), the token never
    printed; a plain base URL runs."""
    token = "tok-DO-NOT-PRINT-42"
    for backend, base in (("openai", "/v1"), ("anthropic", "")):
        for suffix in (f"?api_token={token}", f"#{token}"):
            out = tmp_path / f"{backend}-{suffix[0]}"
            args = ["eval", "-m", "fake-model", "-d", str(build_dir), "--out", str(out), "--backend",
                    backend, "--base-url", api.url + base + suffix, "--scoring", "generate"]  # fmt: skip
            result = CliRunner().invoke(app, args)
            flat = " ".join(result.output.split())
            assert result.exit_code == 2 and "EV308" in flat and "query string" in flat, result.output
            assert token not in result.output and "_API_KEY" in flat
            assert not out.exists()
    assert api.state.requests == 0
    out = tmp_path / "plain"
    args = ["eval", "-m", "fake-model", "-d", str(build_dir), "--out", str(out), "--backend", "openai",
            "--base-url", api.url + "/v1", "--scoring", "generate", "--limit", "2"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output


def test_a_server_without_logprobs_is_a_diagnostic(build_dir: Path, tmp_path: Path, api) -> None:
    api.state.logprobs = False
    with pytest.raises(DiagnosticError) as error:
        run_eval(eval_request(build_dir, tmp_path / "run", api.url, scoring="logprob"))
    assert error.value.diagnostics[0].code == "EV306"


@pytest.mark.parametrize("style", ["inline", "field"])
def test_reasoning_is_kept_apart_and_the_answer_read_from_the_final_text(
    build_dir: Path, tmp_path: Path, api, style: str
) -> None:
    api.state.thinking = style
    out = tmp_path / "run"
    results = run_eval(eval_request(build_dir, out, api.url, chat=True, thinking=True)).results.to_json()
    rows = records(out)
    assert Counter(r["pred"] for r in rows) == Counter(expected_answer(p) for p in api.state.received)
    for row in rows:
        assert row["raw_output"].strip() == str(row["pred"])  # the thinking is not in the answer
        assert row["reasoning"].split("\n")[0].strip() == str((row["pred"] + 1) % 3)
    assert results["thinking"] is True and results["scoring"]["stop_strings"] == []


def test_anthropic_messages_with_extended_thinking(build_dir: Path, tmp_path: Path, api) -> None:
    out = tmp_path / "run"
    results = run_eval(
        eval_request(build_dir, out, api.url, "anthropic", thinking_budget=2048, thinking=True)
    ).results.to_json()
    rows = records(out)
    assert_exact(out, api)
    assert all(r["reasoning"] == f"{(r['pred'] + 2) % 3}?" for r in rows)
    assert results["backend"]["name"] == "anthropic"
    assert results["backend"]["usage"]["requests"] == len(rows)
    # no temperature was sent, so none is recorded (the service sampled as it does with thinking)
    assert (
        results["backend"]["sampling"]["temperature"] is None
        and results["backend"]["sampling"]["top_p"] is None
    )
    assert not any("temperature" in body for body in api.state.bodies)
    before = api.state.requests
    plain = run_eval(
        eval_request(build_dir, tmp_path / "plain", api.url, "anthropic", chat=True)
    ).results.to_json()
    assert "reasoning" not in records(tmp_path / "plain")[0]
    assert plain["backend"]["usage"]["requests"] == api.state.requests - before
    assert all(h.get("temperature") == 0.0 for h in api.state.bodies if "thinking" not in h)
    with pytest.raises(DiagnosticError) as error:
        run_eval(eval_request(build_dir, tmp_path / "lp", api.url, "anthropic", scoring="logprob"))
    assert error.value.diagnostics[0].code == "EV302"


def test_samples_give_mean_and_sd(build_dir: Path, tmp_path: Path, api) -> None:
    sampled = {"sampling": SamplingConfig(temperature=0.7, top_p=0.9, seed=5), "samples": 3}
    results = run_eval(eval_request(build_dir, tmp_path / "run", api.url, **sampled)).results.to_json()
    assert results["samples"]["seeds"] == [5, 6, 7]
    assert results["samples"]["runs"] == ["sample-1", "sample-2", "sample-3"]
    assert results["samples"]["metrics_sd"]["overall"]["acc"] == 0.0  # the fake model does not sample
    for k in (1, 2, 3):
        assert (tmp_path / "run" / f"sample-{k}" / "results.json").is_file()
    assert results["backend"]["usage"]["requests"] == 3 * results["dataset"]["evaluated"]


def test_no_key_in_any_output_or_log(
    build_dir: Path, tmp_path: Path, api, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    out = tmp_path / "run"
    api.state.faults = ["rate_limit"]
    args = ["eval", "--model", "fake-model", "--dataset", str(build_dir), "--out", str(out), "--quiet",
            "--bootstrap", "20", "--scoring", "generate", "--backend", "openai",
            "--base-url", api.url + "/v1"]  # fmt: skip
    ok = CliRunner().invoke(app, args)
    assert ok.exit_code == 0, ok.output
    api.state.sticky = "auth"  # the server echoes part of the key, as real ones do
    refused = CliRunner().invoke(app, [*args[:6], str(tmp_path / "refused"), *args[7:]])
    assert refused.exit_code == 2 and "EV305" in refused.output
    assert any(SECRET in str(h) for h in api.state.headers_seen)  # it was sent...
    written = [p.read_bytes().decode("utf-8", "replace") for p in tmp_path.rglob("*") if p.is_file()]
    assert len(written) >= 8
    for text in [ok.output, refused.output, caplog.text, *written]:
        assert SECRET not in text and SECRET[-12:] not in text  # ...and never shown or written


def test_reasoning_split_and_early_stop_only_on_the_final_answer() -> None:
    assert as_reply("<think>\n1\n</think>\n2\n") == "\n2\n"
    assert as_reply("<think>\n1\n</think>\n2\n").reasoning == "1"
    assert as_reply("<think>\n1\nstill thinking") == "" and as_reply("<think>1").reasoning == "1"
    assert as_reply("thinking, opened by the template\n</think>2") == "2"
    assert as_reply("cut off while thinking", thinking=True) == ""
    assert as_reply("0\n") == "0\n" and as_reply("0\n").reasoning is None
    final = final_answer_test(first_line_ended, thinking=False)
    assert final("1\n") and not final("<think>\n1\n") and final("<think>x</think>1\n")
    thinking = final_answer_test(first_line_ended, thinking=True)
    assert not thinking("1\n") and thinking("x\n</think>\n1\n") and not thinking("x</think>\n")


EXTENDED_THINKING = ["--backend", "anthropic", "--thinking-budget", "2048", "--scoring", "generate"]


@pytest.mark.parametrize(
    ("option", "code"),
    [
        (["--backend", "nope"], "EV300"),
        (["--backend", "openai", "--concurrency", "0"], "EV308"),
        (["--backend", "openai", "--top-p", "0"], "EV308"),
        (["--backend", "openai", "--samples", "3", "--scoring", "generate"], "EV307"),
        (["--backend", "anthropic", "--thinking-budget", "100"], "EV308"),
        # extended thinking samples as the service does: a temperature would be dropped unsaid
        ([*EXTENDED_THINKING, "--temperature", "0.7"], "EV308"),
        ([*EXTENDED_THINKING, "--top-p", "0.9"], "EV308"),
        (["--base-url", "http://127.0.0.1:1/v1"], "EV308"),
        (["--backend", "vllm", "--vllm-arg", "no-equals"], "EV308"),
        (["--vllm-arg", "max_model_len=10"], "EV308"),  # transformers would not use it
        (["--tensor-parallel-size", "4"], "EV308"),
        (["--temperature", "0.7"], "EV308"),  # log-probability scoring samples nothing
        # --dtype: exited 0 and recorded "nope" in run.json; a served model runs at the server's dtype
        (["--backend", "openai", "--dtype", "nope"], "EV053"),
        (["--backend", "anthropic", "--dtype", "nope"], "EV053"),
        (["--backend", "vllm", "--dtype", "nope"], "EV053"),
        (["--backend", "openai", "--dtype", "bfloat16"], "EV308"),
        (["--backend", "anthropic", "--dtype", "float16"], "EV308"),
    ],
)
def test_backend_options_are_checked_before_anything_runs(
    build_dir: Path, tmp_path: Path, option: list[str], code: str
) -> None:
    args = ["eval", "--model", "m", "--dataset", str(build_dir), "--out", str(tmp_path / "run"), "--quiet"]
    result = CliRunner().invoke(app, [*args, *option])
    assert result.exit_code == 2 and code in result.output, result.output
    assert not (tmp_path / "run").exists()


def test_messages_and_urls_lose_every_part_of_a_key() -> None:
    from jbcompile.redaction import redact, redact_url

    assert "LEAK-012" not in redact(f"Incorrect API key provided: ...{SECRET[-14:]}", SECRET)
    assert redact("key sk-proj-abcdefgh1234 is wrong") == "key sk-*** is wrong"
    assert redact("model not found", SECRET) == "model not found"
    assert redact_url("https://user:pass@host:8443/v1?api_key=x#f") == "https://host:8443/v1"


def test_the_request_cache_keeps_a_non_finite_logprob_as_the_server_sent_it(tmp_path: Path) -> None:
    """A server may send -Infinity for an option's logprob: the cache keeps the response (a run that
    refused to write it stopped at its first reply), and a rerun reads it back as sent."""
    import math

    from jbcompile.evaluate.backends.remote import RequestCache

    path = tmp_path / "requests.jsonl"
    response = {"choices": [{"logprobs": {"top_logprobs": [{"0": -0.1, "1": float("-inf")}]}}]}
    cache = RequestCache(path)
    cache.put("k", response)
    cache.close()
    (top,) = RequestCache(path).get("k")["choices"][0]["logprobs"]["top_logprobs"]
    assert top["0"] == -0.1 and math.isinf(top["1"]) and top["1"] < 0
