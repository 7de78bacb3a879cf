"""`jbcompile score` of an inspect log of a failed run (EV143): samples that never got the model's reply
were scored as out-of-choice answers — an offline mockllm run that failed on every sample printed
`n 10, ooc_ratio 1.000, acc 0.000` with exit 0. The logs here are written by inspect itself, running the
exported task with mockllm and a token counter that fails as tiktoken's download fails offline."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.eval.test_harness_export import OFFLINE, run_cli

KEY = "sk-proj-h65failedlogKEY0123456789abcdef"  # the key a failed request's error quotes
FAILING = f"Error downloading o200k_base (Authorization: Bearer {KEY})"


def inspect_log(build: Path, tmp: Path, fail_every: int, **options: Any) -> Path:
    """The .eval log of the exported bbq task over 36 rows, run with mockllm: every ``fail_every``-th
    token count raises (0: none), as tiktoken's download of its encoding fails offline."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, get_model
    from inspect_ai.model._providers.mockllm import MockLLM

    calls = [0]

    async def count(self: Any, text: str) -> int:
        calls[0] += 1
        if fail_every and calls[0] % fail_every == 0:
            raise RuntimeError(FAILING)
        return max(1, len(text) // 4)

    tasks = tmp / "tasks"
    code, output = run_cli("export", "inspect", str(build), "--out", str(tasks), "--local")
    assert code == 0, output
    replies = ["A", "B", "C", "A", "B", "none of them"]  # the last: an out-of-choice answer
    outputs = [ModelOutput.from_content("mockllm/model", f"ANSWER: {replies[k % 6]}") for k in range(36)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(MockLLM, "count_text_tokens", count)
        for name, value in OFFLINE.items():
            patch.setenv(name, value)
        inspect_eval(
            f"{tasks / 'eval_fixture_bbq.py'}@eval_fixture_lite",
            model=get_model("mockllm/model", custom_outputs=outputs),
            log_dir=str(tmp / "logs"),
            display="none",
            log_format="eval",
            **options,
        )
    (log,) = (tmp / "logs").glob("*.eval")
    return log


@pytest.fixture(scope="module")
def logs(build_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A log whose every sample failed (inspect stops at the first error: status error), one of a run
    that went on past its errors (status success, a third of the samples failed), one never scored
    (`--no-score`) and a good one."""
    return {
        "all failed": inspect_log(build_dir, tmp_path_factory.mktemp("all"), 1),
        "partly failed": inspect_log(build_dir, tmp_path_factory.mktemp("part"), 3, fail_on_error=False),
        "unscored": inspect_log(build_dir, tmp_path_factory.mktemp("unscored"), 0, score=False),
        "good": inspect_log(build_dir, tmp_path_factory.mktemp("good"), 0),
    }


@pytest.fixture(autouse=True)
def _key_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)  # a secret the redaction knows
    yield


def samples_of(log: Path) -> tuple[str, list[Any]]:
    from inspect_ai.log import read_eval_log

    read = read_eval_log(str(log))
    return read.status, list(read.samples or [])


def as_json(log: Path, out: Path, status: str | None = None) -> Path:
    """The log in inspect's JSON format (`inspect log convert`), its status changed when given."""
    from inspect_ai.log import read_eval_log, write_eval_log

    read = read_eval_log(str(log))
    if status is not None:
        read.status = status  # type: ignore[assignment]
    write_eval_log(read, str(out), format="json")
    return out


def refused(log: Path, out: Path) -> str:
    code, output = run_cli("score", str(log), "--out", str(out), "--bootstrap", "0")
    assert code == 2 and "EV143" in output, output
    assert not out.exists(), "nothing is written for a refused log"
    assert KEY[:12] not in output and "***" in output, output
    assert "inspect eval-retry" in output, output  # the hint: what to do
    return " ".join(output.split())  # the console wraps long lines


@pytest.mark.parametrize("which", ["all failed", "partly failed"])
@pytest.mark.parametrize("form", ["eval", "json"])
def test_a_log_with_samples_that_failed_is_refused_with_how_many_and_which(
    logs: dict[str, Path], tmp_path: Path, which: str, form: str
) -> None:
    status, samples = samples_of(logs[which])
    failed = [sample for sample in samples if sample.error is not None]
    assert failed and (len(failed) == len(samples)) == (which == "all failed")
    assert status == ("error" if which == "all failed" else "success")  # a run past its errors: success
    log = logs[which] if form == "eval" else as_json(logs[which], tmp_path / "log.json")
    said = refused(log, tmp_path / "score")
    assert f"{len(failed)} of {len(samples)} samples hold no answer of the model" in said, said
    assert all(str(sample.id) in said for sample in failed[:3]), said
    assert "Error downloading o200k_base" in said, said
    assert ("did not finish (status error" in said) == (which == "all failed"), said


def test_a_log_never_scored_is_refused(logs: dict[str, Path], tmp_path: Path) -> None:
    """`inspect eval --no-score`: every reply is there, but no scorer read a letter from it."""
    status, samples = samples_of(logs["unscored"])
    assert status == "success" and samples and not any(sample.scores for sample in samples)
    code, output = run_cli("score", str(logs["unscored"]), "--out", str(tmp_path / "s"), "--bootstrap", "0")
    said = " ".join(output.split())
    assert code == 2 and "EV143" in said and "36 of 36 samples" in said and "never scored" in said, said
    assert "inspect score LOG" in said and not (tmp_path / "s").exists(), said


@pytest.mark.parametrize("status", ["cancelled", "started", "error"])
def test_a_log_of_a_run_that_did_not_finish_is_refused_though_its_samples_were_answered(
    logs: dict[str, Path], tmp_path: Path, status: str
) -> None:
    """A cancelled run keeps the samples that finished and drops the others: every sample there is
    answered, yet the rows are not the task's."""
    log = as_json(logs["good"], tmp_path / "log.json", status)
    said = refused(log, tmp_path / "score")
    assert f"did not finish (status {status})" in said and "samples hold no answer" not in said, said


def test_a_good_log_and_its_out_of_choice_answers_are_scored(logs: dict[str, Path], tmp_path: Path) -> None:
    """What EV143 leaves alone: a finished run whose scorer found no letter in a reply still recorded a
    score, an out-of-choice answer that counts."""
    status, samples = samples_of(logs["good"])
    assert status == "success" and all(sample.error is None for sample in samples)
    for form, log in (("eval", logs["good"]), ("json", as_json(logs["good"], tmp_path / "log.json"))):
        code, output = run_cli("score", str(log), "--out", str(tmp_path / form), "--bootstrap", "0")
        assert code == 0, output
        overall = json.loads((tmp_path / form / "results.json").read_text("utf-8"))["metrics"]["overall"]
        assert (overall["n"], overall["n_valid"]) == (len(samples), 30) == (36, 30), overall


@pytest.mark.parametrize(("status", "code"), [("error", "EV143"), ("success", "EV062")])
def test_an_eval_log_without_samples_is_refused(tmp_path: Path, status: str, code: str) -> None:
    """A run that failed before its first sample (its dataset not found) writes a log without samples:
    that was an IndexError's traceback."""
    from inspect_ai.log import EvalConfig, EvalDataset, EvalError, EvalLog, EvalSpec, write_eval_log

    spec = EvalSpec(
        task="t",
        created="2026-01-01T00:00:00+00:00",
        model="mockllm/model",
        dataset=EvalDataset(),
        config=EvalConfig(),
    )
    error = EvalError(message="FileNotFoundError: no dataset", traceback="", traceback_ansi="")
    log = EvalLog(eval=spec, samples=[], status=status, error=error if status == "error" else None)  # type: ignore[arg-type]
    path = tmp_path / "log.eval"
    write_eval_log(log, str(path), format="eval")
    result, output = run_cli("score", str(path), "--out", str(tmp_path / "s"), "--bootstrap", "0")
    assert result == 2 and code in output and "Traceback" not in output, output
    assert ("no dataset" in output) == (status == "error") and not (tmp_path / "s").exists(), output
