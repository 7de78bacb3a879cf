"""`--answer-pattern`: where a prompt file's replies put their answer (issue 25 §1.2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jbcompile.evaluate.kind import EvalOptions
from jbcompile.evaluate.parsing import answer_after, read_exact
from jbcompile.evaluate.requests import EvalRequest, check_eval_request

from tests.eval.test_protocols_check import (  # noqa: F401 - fixtures
    eval_fake,
    keys,
    kinds_build,
    scripted,
)


@pytest.mark.parametrize(
    ("reply", "pattern", "expected"),
    [
        ("正しい理由: …\n回答: 2", "回答[:：]", " 2"),
        ("回答: 1 …いや、回答: 2", "回答[:：]", " 2"),  # the last match
        ("Answer is <2>.", r"<(\d)>", "2"),  # the first group, when the pattern has one
        ("no marker here", "回答[:：]", None),  # never matched: out of choice
        # docs/eval.md's pattern for a base model that goes on after its answer: the first one
        ("理由…\n回答: 1\n\n背景情報: …\n回答: 2", r"\A[\s\S]*?回答[:：]\s*(\d)", "1"),
    ],
)
def test_answer_after(reply: str, pattern: str, expected: str | None) -> None:
    assert answer_after(reply, pattern) == expected


def test_read_exact_takes_one_option_and_nothing_else() -> None:
    options = ("七十代の男性", "大学生", "確かなことは言えない")
    assert read_exact(" 「2」。", ("0", "1", "2"), options) == 2
    assert read_exact("大学生", ("0", "1", "2"), options) == 1
    assert read_exact("2です", ("0", "1", "2"), options) is None
    assert read_exact("1 2", ("0", "1", "2"), options) is None


@pytest.mark.parametrize(
    ("pattern", "scoring", "codes"),
    [("回答[:：]", "generate", []), ("回答(", "generate", ["EV026"]), ("回答", "logprob", ["EV027"])],
)
def test_the_pattern_is_checked_before_anything_loads(pattern: str, scoring: str, codes: list[str]) -> None:
    request = EvalRequest(
        model="org/model", dataset="org/data", options=EvalOptions(scoring=scoring, answer_pattern=pattern)
    )
    assert [d.code for d in check_eval_request(request)] == codes


# ---- a pattern that never matches is said, not left to show as a model answering nothing ----------------


def _run_read_after(server, build: Path, tmp_path: Path, reply: str) -> tuple[Path, str]:  # type: ignore[no-untyped-def]
    """An eval run of 4 rows whose replies are ``reply``, read after 回答: (--answer-pattern)."""
    server.script[0] = reply
    out = tmp_path / "run"
    code, output = eval_fake(
        server, build, out, "--setting", "basic-1", "--scoring", "generate", "--limit", "4",
        "--answer-pattern", "回答[:：]",
    )  # fmt: skip
    assert code == 0, output
    return out, output


@pytest.mark.parametrize(("reply", "matched"), [("答え: {a}", 0), ("回答: {a}", 4)])
def test_eval_says_when_the_pattern_matched_no_reply(
    scripted,  # noqa: F811
    kinds_build: Path,  # noqa: F811
    tmp_path: Path,
    reply: str,
    matched: int,
) -> None:
    """results.json counts the replies the pattern matched; none matched is said in the report and on
    the terminal (every answer out of choice because of the pattern, not the model)."""
    out, output = _run_read_after(scripted, kinds_build, tmp_path, reply)
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["scoring"]["answer_pattern_matched"] == matched
    report = (out / "report.md").read_text(encoding="utf-8")
    said = "matched none of the 4 replies"
    assert (said in report) == (said in " ".join(output.split())) == (matched == 0), output


def test_the_hint_after_a_pattern_that_matched_nothing_can_be_followed(
    scripted,  # noqa: F811
    kinds_build: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    """The report's way out names the rows the replies answered (the run's dataset and config): followed
    as printed, with a pattern that matches, it scores; without them, score says what is missing once
    (not once per row) and names them too."""
    import re
    import shlex

    from tests.eval.test_protocols_check import cli

    out, _ = _run_read_after(scripted, kinds_build, tmp_path, "答え: {a}")
    report = (out / "report.md").read_text(encoding="utf-8")
    printed = re.search(r"`jbcompile score predictions.jsonl (.*?) --answer-pattern …`", report)
    assert printed is not None, report
    rows = shlex.split(printed.group(1))
    assert rows[:2] == ["--prediction-field", "raw_output"] and "--dataset" in rows and "--config" in rows
    predictions = out / "predictions.jsonl"
    code, output = cli("score", predictions, *rows, "--answer-pattern", "答え[:：]", "--out", tmp_path / "s")
    assert code == 0, output
    scored = (tmp_path / "s" / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
    read = [json.loads(line)["pred"] for line in scored]
    assert len(read) == 4 and None not in read, read  # every reply read after the pattern that matches
    code, output = cli(
        "score", predictions, "--prediction-field", "raw_output", "--answer-pattern", "答え[:：]",
        "--out", tmp_path / "s2",
    )  # fmt: skip
    assert code == 2 and output.count("EV040") == 1, output
    assert " ".join(rows[2:]) in " ".join(output.split()) and not (tmp_path / "s2").exists()


def test_score_refuses_a_pattern_that_matches_no_reply(kinds_build: Path, tmp_path: Path) -> None:  # noqa: F811
    """score: refused before anything is computed (EV069, with a reply); an index or an option's text
    in the column is that option whatever the pattern, and one reply matched is enough."""
    from jbcompile.diagnostics import DiagnosticError
    from jbcompile.evaluate.dataset import load_rows
    from jbcompile.evaluate.requests import ScoreRequest
    from jbcompile.evaluate.score import run_score

    rows = load_rows(str(kinds_build), "sobaco").rows[:6]

    def score(values: list[str], name: str) -> dict:
        path = tmp_path / f"{name}.jsonl"
        pairs = zip(rows, values, strict=True)
        lines = [json.dumps({**row, "reply": value}, ensure_ascii=False) for row, value in pairs]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        request = ScoreRequest(
            predictions=path,
            prediction_field="reply",
            answer_pattern="回答[:：]",
            out=tmp_path / name,
            bootstrap=0,
        )
        return run_score(request).results.to_json()

    with pytest.raises(DiagnosticError) as raised:
        score(["答え: 1"] * 6, "none")
    (problem,) = raised.value.diagnostics
    assert problem.code == "EV069" and "答え: 1" in problem.message and problem.line == 1
    assert "回答[:：]" not in (problem.hint or "")  # the hint does not offer the pattern that failed
    assert not (tmp_path / "none").exists()
    assert score(["1"] * 6, "indexes")["metrics"]["overall"]["n_valid"] == 6
    assert score(["答え: 1"] * 5 + ["回答: 1"], "one")["metrics"]["overall"]["n_valid"] == 1
