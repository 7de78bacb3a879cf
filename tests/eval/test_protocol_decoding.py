"""How a run under a paper's protocol decodes, as the requests a backend sends show it (issue 25 §1.1):
SOBACO's and the JUBAKU-v2 script's replies run to their limit with no stop string — a ``###`` a chat
model writes as a markdown heading would cut a reply before its answer, and a first turn's cut reply is
what the final turn is asked after —, and a backend option that hands decoding to the service is refused
under a protocol whose paper fixed its temperature and limits, rather than recorded at the paper's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.eval.test_protocols_check import (  # noqa: F401 - fixtures
    cli,
    eval_fake,
    keys,
    kinds_build,
    results_of,
    scripted,
)

REPO = Path(__file__).resolve().parents[2]


def _stops(server) -> set[tuple[str, ...]]:  # type: ignore[no-untyped-def]
    """The stop strings of every generation request the server got."""
    return {tuple(body.get("stop") or ()) for body in server.state.bodies}


@pytest.mark.parametrize(
    ("extra", "stops"),
    [
        (("--protocol", "sobaco"), {()}),
        (("--protocol", "sobaco", "--setting", "cot-j-2"), {()}),
        (("--protocol", "sobaco", "--setting", "cot-e-1"), {()}),  # the first turns too
        (("--protocol", "sobaco", "--setting", "cot-r-3", "--max-new-tokens", "4"), {()}),
        # without the protocol, a reply ends at a new section of the prompt's layout, except cot-j's,
        # whose reasons may stand under headings before the answer (a row stops once it is settled)
        (("--setting", "basic-1", "--scoring", "generate"), {("###",)}),
        (("--setting", "cot-e-1", "--scoring", "generate"), {("###",)}),
        (("--setting", "cot-j-1", "--scoring", "generate"), {()}),
    ],
)
def test_sobaco_replies_run_to_the_papers_limit(
    scripted,  # noqa: F811
    kinds_build: Path,  # noqa: F811
    tmp_path: Path,
    extra: tuple[str, ...],
    stops: set[tuple[str, ...]],
) -> None:
    scripted.script[0] = "{a}"
    out = tmp_path / "run"
    code, output = eval_fake(scripted, kinds_build, out, "--limit", "4", *extra)
    assert code == 0, output
    assert scripted.state.bodies and _stops(scripted) == stops
    assert results_of(out)["scoring"]["stop_strings"] == sorted({s for found in stops for s in found})


def test_jubaku_replies_run_to_the_scripts_ten_tokens(
    scripted,  # noqa: F811
    kinds_build: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    scripted.script[0] = "B"
    for protocol, stops in ((("--protocol", "jubaku"), {()}), (("--scoring", "generate"), {("###",)})):
        scripted.state.bodies.clear()
        out = tmp_path / protocol[-1]
        code, output = cli(
            "eval", "-m", "fake-model", "-d", kinds_build, "--config", "jubaku", "--out", out,
            "--backend", "openai", "--base-url", scripted.url + "/v1", "--bootstrap", "0", "--quiet",
            "--limit", "4", *protocol,
        )  # fmt: skip
        assert code == 0, output
        assert _stops(scripted) == stops
        run = json.loads((out / "run.json").read_text(encoding="utf-8"))
        sent = {body.get("max_tokens") for body in scripted.state.bodies}
        assert run["max_new_tokens"] is None and {run["decoding"]["max_new_tokens"]} == sent


def test_anthropic_extended_thinking_is_not_the_papers_decoding(
    kinds_build: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """--thinking-budget lets Anthropic's API decode at its own temperature with a thinking budget of
    1,024 tokens or more: under --protocol sobaco (800 tokens at 0.6) or jubaku (10 greedy tokens) the
    run is refused before anything is sent; JBBQ, whose paper states no decoding, takes it."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "EMPTY")
    for config, protocol in (("sobaco", "sobaco"), ("jubaku", "jubaku")):
        out = tmp_path / protocol
        code, output = cli(
            "eval", "-m", "claude-x", "-d", kinds_build, "--config", config, "--out", out,
            "--backend", "anthropic", "--base-url", "http://127.0.0.1:9", "--chat",
            "--thinking-budget", "2048", "--protocol", protocol,
        )  # fmt: skip
        flat = " ".join(output.split())
        assert code == 2 and "EV201" in flat and "--thinking-budget" in flat, output
        assert "drop --protocol" in flat and not out.exists()
        # the protocol's own temperature (SOBACO's 0.6 for a reasoning model) is no option the user
        # gave: it draws no "--temperature and --top-p would not be used"
        assert "EV308" not in flat and "--top-p" not in flat, output
    from jbcompile.evaluate.protocols import decoding_problems

    assert decoding_problems("jbbq", True, "an option's own decoding") == []
    assert decoding_problems("sobaco", False, None) == []


@pytest.mark.parametrize("style", ["field", "inline"])
def test_a_service_model_that_turns_out_to_reason_stops_a_protocol_run(
    kinds_build: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    style: str,
) -> None:
    """A model behind a server shows that it reasons only by its replies (a reasoning field, or a think
    block in the text): without --thinking, the run was decoded as SOBACO decoded a non-reasoning model
    (1 token at temperature 0), so it stops at the first such reply (EV201) and keeps none of them; with
    --thinking it runs, and without the protocol such replies are read."""
    from tests.eval import fake_api

    def reasoning(prompt: str, state: fake_api.FakeState) -> tuple[str, str | None]:
        answer = str(fake_api.expected_answer(prompt))
        return (answer, "考え中") if style == "field" else (f"<think>考え中</think>{answer}", None)

    monkeypatch.setattr(fake_api, "_answer_text", reasoning)
    with fake_api.FakeAPI() as server:
        out = tmp_path / "run"
        code, output = eval_fake(server, kinds_build, out, "--chat", "--limit", "4", "--protocol", "sobaco")
        flat = " ".join(output.split())
        assert code == 2 and "EV201" in flat and "replies carry its reasoning" in flat, output
        assert not (out / "predictions.jsonl").exists()
        for extra in (("--protocol", "sobaco", "--thinking"), ("--scoring", "generate")):
            out = tmp_path / "-".join(extra)
            code, output = eval_fake(server, kinds_build, out, "--chat", "--limit", "4", *extra)
            assert code == 0, output
            # outside the protocol, without --thinking, the run says the replies had too little room
            said = "4 of the 4 replies carry the model's reasoning" in " ".join(output.split())
            assert said == ("--thinking" not in extra), output
            # kept with the run's figures too (EV055), where the terminal said it
            kept = [
                w["code"] for w in json.loads((out / "results.json").read_text("utf-8")).get("warnings", [])
            ]
            assert kept == (["EV055"] if said else []), kept
            assert ("`EV055`" in (out / "report.md").read_text("utf-8")) == said


def test_only_a_protocol_with_a_reasoning_temperature_stops_a_reasoning_run(
    kinds_build: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server's model that turns out to reason stops a run only under a protocol whose paper decoded a
    reasoning model at a temperature of its own (SOBACO's 0.6): JUBAKU-v2's script decodes every model
    greedily, so such a run goes on and warns as any run does (EV055). The docs say which."""
    from jbcompile.codes import all_codes, doc_text
    from jbcompile.evaluate.protocols import all_protocols

    from tests.eval import fake_api

    monkeypatch.setattr(fake_api, "_answer_text", lambda prompt, state: ("B", "考え中"))
    with fake_api.FakeAPI() as server:
        out = tmp_path / "jubaku"
        code, output = cli(
            "eval", "-m", "fake-model", "-d", kinds_build, "--config", "jubaku", "--out", out,
            "--backend", "openai", "--base-url", server.url + "/v1", "--bootstrap", "0", "--quiet",
            "--chat", "--limit", "4", "--protocol", "jubaku",
        )  # fmt: skip
    assert code == 0 and "EV201" not in output, output
    assert [w["code"] for w in results_of(out)["warnings"]] == ["EV055"]
    stopping = {
        name
        for name, protocol in all_protocols().items()
        if protocol.reasoning_temperature not in (None, protocol.temperature)
    }
    assert stopping == {"sobaco"}
    explained = doc_text(all_codes()["EV055"]) or ""
    flat = " ".join(explained.split())
    assert "under `--protocol sobaco`" in flat and "under a `--protocol`" not in flat, flat
    reasoning = " ".join((REPO / "docs" / "eval.md").read_text("utf-8").split())
    assert "(and not under `--protocol sobaco`" in reasoning and "outside a protocol" not in reasoning


@pytest.mark.parametrize(
    ("extra", "first", "final"),
    [
        (("--protocol", "sobaco", "--setting", "cot-e-1"), 100, 1),  # SOBACO Appendix D
        (("--protocol", "sobaco", "--setting", "cot-r-2"), 1, 1),  # cot-r's first turn is the basic prompt
        (("--protocol", "sobaco", "--setting", "cot-e-3", "--thinking"), 800, 800),
        (("--setting", "cot-e-1", "--scoring", "generate"), 100, 16),
    ],
)
def test_a_first_turns_limit_is_on_record(
    scripted,  # noqa: F811
    kinds_build: Path,  # noqa: F811
    tmp_path: Path,
    extra: tuple[str, ...],
    first: int,
    final: int,
) -> None:
    """A two-turn setting's first turns have a limit of their own (SOBACO: 100 for cot-e's, against 1 for
    the answer): results.json and the report's Decoding line say it beside the final turn's, as sent."""
    out = tmp_path / "run"
    code, output = eval_fake(scripted, kinds_build, out, "--limit", "3", *extra)
    assert code == 0, output
    sent = sorted({body.get("max_tokens") for body in scripted.state.bodies})
    assert sent == sorted({first, final})
    scoring = results_of(out)["scoring"]
    assert (scoring["first_turn_max_new_tokens"], scoring["max_new_tokens"]) == (first, final)
    assert scoring["first_turn_stop_strings"] == ([] if "--protocol" in extra else ["###"])
    # run.json records them too, as sent (its max_new_tokens is the flag: null when not given)
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run["decoding"] == {"max_new_tokens": final, "first_turn_max_new_tokens": first}
    if "--protocol" in extra:
        lines = (out / "report.md").read_text(encoding="utf-8").splitlines()
        decoding = next(line for line in lines if "Decoding" in line)
        said = f"first turns at most {first} new token{'s' * (first > 1)}, final turns at most {final}"
        assert said in decoding, decoding


def test_a_one_turn_setting_records_no_first_turn(scripted, kinds_build: Path, tmp_path: Path) -> None:  # noqa: F811
    code, output = eval_fake(scripted, kinds_build, tmp_path / "run", "--limit", "2", "--protocol", "sobaco")
    assert code == 0, output
    assert "first_turn_max_new_tokens" not in results_of(tmp_path / "run")["scoring"]
    assert json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))["decoding"] == {
        "max_new_tokens": 1
    }
    # the record is not a setting a resume compares: the same run, and one whose run.json predates it,
    # resume
    for older in (False, True):
        run_path = tmp_path / "run" / "run.json"
        if older:
            run_path.write_text(
                json.dumps(
                    {k: v for k, v in json.loads(run_path.read_text("utf-8")).items() if k != "decoding"}
                ),
                encoding="utf-8",
            )
        code, output = eval_fake(
            scripted, kinds_build, tmp_path / "run", "--limit", "2", "--protocol", "sobaco"
        )
        assert code == 0 and "EV007" not in output, output


def _cut_run(server, build: Path, tmp_path: Path) -> tuple[Path, str]:  # type: ignore[no-untyped-def]
    """An eval run of SOBACO basic-1 under its protocol (1 new token) whose replies give reasons before
    the answer: every reply is cut at the limit, out of choice (EV054)."""
    server.state.token_limit = True
    server.script[0] = "理由: どれも言えます。\n回答: {a}"
    cut = tmp_path / "cut"
    code, output = eval_fake(server, build, cut, "--limit", "4", "--protocol", "sobaco")
    assert code == 0, output
    return cut, output


def test_replies_cut_at_the_limit_into_out_of_choice_are_warned_of(
    scripted,  # noqa: F811
    kinds_build: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    """A prompt that asks for reasons before the answer, run under a setting that allows one token
    (SOBACO basic-1: 1 new token), gives replies cut after their first token, all out of choice: EV054
    says so (a warning, the run still writes its results), and names the ways out. A run whose replies
    fit, or whose cut replies still answered, gets none; the server says where a reply stopped."""
    cut, output = _cut_run(scripted, kinds_build, tmp_path)
    assert results_of(cut)["metrics"]["overall"]["ooc_ratio"] == 1.0
    assert "EV054" in output and "4 of the 4 replies" in output and "--setting cot-j-1" in output
    # …and kept with the figures: results.json's warnings, report.md's heading ahead of its tables
    (kept,) = results_of(cut)["warnings"]
    assert kept["code"] == "EV054" and kept["message"].startswith("4 of the 4 replies")
    assert "--setting cot-j-1" in kept["hint"]
    report = (cut / "report.md").read_text("utf-8")
    assert report.index("## Warnings: read these figures with them") < report.index("## Overall")
    assert f"- `EV054` {kept['message']}" in report and str(tmp_path) not in report
    assert all(
        json.loads(line).get("at_limit")
        for line in (cut / "predictions.jsonl").read_text("utf-8").splitlines()
    )
    # `score` of the run's predictions scores the same records: the same warning, said and kept
    rescored = tmp_path / "rescored"
    code, output = cli("score", cut / "predictions.jsonl", "--out", rescored, "--bootstrap", "0")
    assert code == 0 and "EV054" in output, output
    assert results_of(rescored)["warnings"] == [kept]
    assert f"- `EV054` {kept['message']}" in (rescored / "report.md").read_text("utf-8")
    # the reasoning setting has the room: no warning
    code, output = eval_fake(
        scripted,
        kinds_build,
        tmp_path / "room",
        "--limit",
        "4",
        "--protocol",
        "sobaco",
        "--setting",
        "cot-j-1",
    )
    assert code == 0 and "EV054" not in output, output
    assert "warnings" not in results_of(tmp_path / "room")
    assert "## Warnings" not in (tmp_path / "room" / "report.md").read_text("utf-8")
    # cut, but the first token is the answer: read, no warning
    scripted.script[0] = "{a} です。"
    code, output = eval_fake(
        scripted, kinds_build, tmp_path / "answered", "--limit", "4", "--protocol", "sobaco"
    )
    assert code == 0 and "EV054" not in output, output


def test_an_eval_runs_replies_read_again_keep_its_warnings(
    scripted,  # noqa: F811
    kinds_build: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    """`score --prediction-field raw_output` of an eval run's predictions.jsonl reads its replies again:
    EV055 (about the replies) is carried from its results.json, EV054 is counted afresh from the rows'
    at_limit flags, the new reading and the limit in the run's run.json — not copied."""
    cut, output = _cut_run(scripted, kinds_build, tmp_path)
    (kept,) = results_of(cut)["warnings"]
    reasoned = {"code": "EV055", "message": "4 of the 4 replies carry the model's reasoning", "hint": "h"}
    written = json.loads((cut / "results.json").read_text("utf-8"))
    written["warnings"] = [reasoned, kept]
    (cut / "results.json").write_text(json.dumps(written), "utf-8")

    def reread(name: str) -> tuple[str, list[dict]]:
        out = tmp_path / name
        code, output = cli(
            "score", cut / "predictions.jsonl", "--prediction-field", "raw_output", "--dataset", kinds_build,
            "--config", "sobaco", "--setting", "basic-1", "--out", out, "--bootstrap", "0",
        )  # fmt: skip
        assert code == 0, output
        return output, results_of(out).get("warnings", [])

    output, warnings = reread("again")
    assert warnings == [reasoned, kept] and "EV054" in output and "EV055" in output
    # the replies did not stop at the limit after all: no EV054, whatever the run's results.json says
    path = cut / "predictions.jsonl"
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    path.write_text("".join(json.dumps({**row, "at_limit": False}) + "\n" for row in rows), "utf-8")
    output, warnings = reread("uncut")
    assert warnings == [reasoned] and "EV054" not in output


def test_a_stray_reasoned_reply_does_not_mark_a_run() -> None:
    """EV055 marks a run whose replies reason as a habit (more than 5% of them), not one whose model
    wrote a think block once in hundreds of replies."""
    from jbcompile.evaluate.run import reasoning_warning

    def records(reasoned: int, total: int = 200) -> list[dict]:
        return [{"pred": None, **({"reasoning": "…"} if i < reasoned else {})} for i in range(total)]

    assert reasoning_warning(records(1), False, 16) is None
    assert reasoning_warning(records(10), False, 16) is None  # 5%: not more
    warned = reasoning_warning(records(11), False, 16)
    assert warned is not None and warned.message.startswith("11 of the 200 replies")
    assert reasoning_warning(records(200), True, 16) is None  # run with --thinking


@pytest.mark.parametrize(
    ("row", "at_limit"),
    [
        ([5, 6, 7], True),  # filled the limit, no end token
        ([5, 6, 2], False),  # its end token came last
        ([5, 6], False),  # stopped before the limit (a stop string, an early-stopped answer)
        ([5, 0, 0], False),  # model.generate padded a row that ended early
    ],
)
def test_a_local_model_says_where_its_reply_stopped(row: list[int], at_limit: bool) -> None:
    """The transformers backend's replies say whether they stopped at the limit, as a server's finish
    reason does (EV054 reads it)."""
    from types import SimpleNamespace

    from jbcompile.evaluate.backends.transformers import TransformersBackend

    backend = SimpleNamespace(eos_ids=frozenset({2}), tokenizer=SimpleNamespace(pad_token_id=0))
    assert TransformersBackend._cut(backend, "text", row, 3).at_limit is at_limit  # type: ignore[arg-type]


def test_the_cut_replies_hint_offers_only_what_the_run_can_take() -> None:
    """EV054's ways out: a setting with more room that the run's task allows (JBBQ's detection has no
    CoT setting, EV024, so it is offered more tokens instead), and --answer-pattern passed where the run
    had none, checked where it had one."""
    from jbcompile.evaluate.kind import EvalOptions
    from jbcompile.evaluate.registered import get_eval_kind
    from jbcompile.evaluate.requests import settings_beyond
    from jbcompile.evaluate.run import cut_replies_warning

    bbq = get_eval_kind("bbq")
    qa = EvalOptions(task="qa", setting="basic", scoring="generate")
    detect = EvalOptions(task="detect", setting="basic", scoring="generate")
    limit = bbq.max_new_tokens(qa)
    assert "cot" in settings_beyond(bbq, qa, limit)
    assert "cot" not in settings_beyond(bbq, detect, limit)
    cut = [{"example_id": str(i), "pred": None, "at_limit": True} for i in range(4)]
    qa_hint = cut_replies_warning(cut, limit, settings_beyond(bbq, qa, limit))
    detect_hint = cut_replies_warning(cut, limit, settings_beyond(bbq, detect, limit))
    patterned = cut_replies_warning(cut, limit, (), answer_pattern="回答[:：]")
    assert qa_hint and detect_hint and patterned
    assert "--setting cot" in (qa_hint.hint or "") and "pass --answer-pattern" in (qa_hint.hint or "")
    assert "--setting" not in (detect_hint.hint or "") and "--max-new-tokens" in (detect_hint.hint or "")
    assert "pass --answer-pattern" not in (patterned.hint or "")
    assert "check that --answer-pattern '回答[:：]' matches" in (patterned.hint or "")
