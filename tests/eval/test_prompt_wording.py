"""Whose prompt a run's replies answered, as results.json (``protocol.prompt_wording``) and the report's
"Prompt wording" line say it: jbcompile's own, the user's --prompt-file (named; jbcompile cannot tell
whether it is the paper's), or — for `score` of another harness's replies — that harness's, which
jbcompile never sent. A report must not claim a prompt the run did not send."""

from __future__ import annotations

import json
from pathlib import Path

from tests.eval.test_protocol_inputs import inspect_log, score
from tests.eval.test_protocols_check import (  # noqa: F401 - fixtures
    cli,
    eval_fake,
    keys,
    kinds_build,
    results_of,
    scripted,
    sobaco_rows,
)

OWN = "The prompt wording is jbcompile's own"


def _wording_line(out: Path) -> str:
    lines = (out / "report.md").read_text(encoding="utf-8").splitlines()
    return next(line for line in lines if line.startswith("- **Prompt wording:**"))


def test_eval_says_whose_prompt_it_sent(scripted, kinds_build: Path, tmp_path: Path) -> None:  # noqa: F811
    own = tmp_path / "own"
    code, output = eval_fake(scripted, kinds_build, own, "--limit", "2", "--protocol", "sobaco")
    assert code == 0, output
    assert results_of(own)["protocol"]["prompt_wording"] == "jbcompile"
    assert OWN in _wording_line(own)

    prompt = tmp_path / "paper_basic.j2"
    prompt.write_text(
        "{{ context }}\n{{ question }}\n{% for o in options %}{{ loop.index0 }}: {{ o }}\n{% endfor %}回答:",
        "utf-8",
    )
    theirs = tmp_path / "file"
    code, output = eval_fake(
        scripted,
        kinds_build,
        theirs,
        "--limit",
        "2",
        "--protocol",
        "sobaco",
        "--setting",
        "basic-2",
        "--prompt-file",
        prompt,
    )
    assert code == 0, output
    described = results_of(theirs)["protocol"]
    assert (described["prompt_wording"], described["prompt_file"]) == ("prompt-file", "paper_basic.j2")
    line = _wording_line(theirs)
    assert OWN not in line and "`paper_basic.j2`" in line and "cannot tell whether it is the paper's" in line

    # compared, each run's prompt is said: they differ
    code, output = cli("compare", own, theirs, "--out", tmp_path / "cmp", "--bootstrap", "0")
    assert code == 0, output
    text = (tmp_path / "cmp" / "compare.md").read_text(encoding="utf-8")
    line = next(line for line in text.splitlines() if line.startswith("- **Prompt wording:**"))
    assert OWN in line and "`paper_basic.j2`" in line

    # score of those predictions reads their run.json: the same prompt
    code, output, results = score(theirs / "predictions.jsonl", tmp_path / "rescored", "--protocol", "sobaco")
    assert code == 0 and results is not None, output
    assert results["protocol"]["prompt_wording"] == "prompt-file"
    assert "`paper_basic.j2`" in _wording_line(tmp_path / "rescored")


def test_score_of_another_harness_does_not_claim_our_prompt(sobaco_rows: list[dict], tmp_path: Path) -> None:  # noqa: F811
    path = inspect_log(tmp_path / "log.json", sobaco_rows[:6], lambda row: str(row["label"]))
    code, output, results = score(path, tmp_path / "scored", "--protocol", "sobaco")
    assert code == 0 and results is not None, output
    assert results["protocol"]["prompt_wording"] == "harness"
    line = _wording_line(tmp_path / "scored")
    assert OWN not in line and "not jbcompile's" in line


def test_a_results_file_from_before_reads_as_it_was_written(tmp_path: Path) -> None:
    from jbcompile.evaluate.protocols import prompt_note
    from jbcompile.evaluate.results import ProtocolInfo

    old = ProtocolInfo.model_validate({"name": "sobaco", "prompt_wording": "jbcompile"})
    assert prompt_note(old.prompt_wording, old.prompt_file).startswith(OWN)
    assert prompt_note(None).startswith(OWN)
    assert json.dumps(old.model_dump(mode="json"))
