"""Every stop of eval and score ends with what is on disk — read from the disk, with counts — and how to
go on; "nothing was written" only when nothing was."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest
from jbcompile.cli import app
from typer.testing import CliRunner

KEY = "sk-kept-messages-0123456789"


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def eval_args(build: Path, out: Path, url: str) -> list[str]:
    return ["eval", "-m", "fake-model", "-d", str(build), "--out", str(out), "--backend", "openai",
            "--base-url", url + "/v1", "--scoring", "generate", "--quiet", "--concurrency", "1",
            "--batch-size", "4", "--bootstrap", "10"]  # fmt: skip


def lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def full_disk_after(monkeypatch: pytest.MonkeyPatch, module, name: str, calls: int) -> None:  # type: ignore[no-untyped-def]
    real = getattr(module, name)
    seen = {"n": 0}

    def write(*args, **kwargs):  # type: ignore[no-untyped-def]
        seen["n"] += 1
        if seen["n"] > calls:
            raise OSError(errno.ENOSPC, "No space left on device", str(args[0]))
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, write)


def test_a_disk_that_fills_mid_run_says_which_predictions_and_replies_were_kept(
    build_dir: Path, tmp_path: Path, api, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jbcompile.evaluate import predictions

    full_disk_after(monkeypatch, predictions, "append_records", 2)  # two batches reach the log
    out = tmp_path / "run"
    result = CliRunner().invoke(app, eval_args(build_dir, out, api.url))
    assert result.exit_code == 2 and "EV102" in result.output, result.output
    assert "nothing was written" not in result.output
    kept, replies = lines(out / "predictions.jsonl"), lines(out / "requests.jsonl")
    assert kept == 8 and replies >= kept
    text = " ".join(result.output.split())
    assert f"{out / 'predictions.jsonl'} (8 predictions, 8 new)" in text
    assert f"{out / 'requests.jsonl'} ({replies} server replies, {replies} new)" in text
    assert f"{out / 'run.json'}" in text and "run the same command again to resume" in text
    monkeypatch.undo()
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    before = api.state.requests
    rerun = CliRunner().invoke(app, eval_args(build_dir, out, api.url))
    assert rerun.exit_code == 0, rerun.output
    evaluated = json.loads((out / "results.json").read_text(encoding="utf-8"))["dataset"]["evaluated"]
    assert api.state.requests - before == evaluated - replies  # what was kept is not asked again


def test_a_stop_on_a_resumed_run_counts_only_the_new_predictions_as_new(
    build_dir: Path, tmp_path: Path, api, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "run"
    api.state.sticky, api.state.sticky_after = "server_error", 4
    first = CliRunner().invoke(app, [*eval_args(build_dir, out, api.url), "--max-attempts", "1"])
    assert first.exit_code == 2 and "(4 predictions, 4 new)" in " ".join(first.output.split())
    api.state.sticky_after = api.state.requests + 4
    second = CliRunner().invoke(app, [*eval_args(build_dir, out, api.url), "--max-attempts", "1"])
    assert second.exit_code == 2 and "(8 predictions, 4 new)" in " ".join(second.output.split()), (
        second.output
    )


def test_ctrl_c_says_what_was_kept(
    build_dir: Path, tmp_path: Path, api, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jbcompile.evaluate.loop import Batch

    real = Batch.run
    seen = {"n": 0}

    def interrupted(self, batch):  # type: ignore[no-untyped-def]
        seen["n"] += 1
        if seen["n"] > 1:
            raise KeyboardInterrupt
        return real(self, batch)

    monkeypatch.setattr(Batch, "run", interrupted)
    out = tmp_path / "run"
    result = CliRunner().invoke(app, eval_args(build_dir, out, api.url))
    assert result.exit_code == 130, result.output
    text = " ".join(result.output.split())
    assert (
        text.startswith("interrupted; kept") and f"{out / 'predictions.jsonl'} (4 predictions, 4 new)" in text
    )


def test_a_full_disk_while_score_commits_leaves_the_folder_as_it_was_and_says_so(
    build_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """score's files are one commit (docs/guarantees.md): a disk that fills while the second of them is
    staged leaves none of them, and the message says so instead of listing files that are not there."""
    from jbcompile import outputs
    from jbcompile.evaluate.dataset import load_rows

    rows = load_rows(str(build_dir), "lite").rows
    scored = tmp_path / "preds.jsonl"
    scored.write_text(
        "".join(json.dumps({"example_id": r["example_id"], "pred": r["label"]}) + "\n" for r in rows), "utf-8"
    )
    full_disk_after(monkeypatch, outputs, "write_new", 1)
    out = tmp_path / "scores"
    args = [
        "score",
        str(scored),
        "--dataset",
        str(build_dir),
        "--prediction-field",
        "pred",
        "--out",
        str(out),
    ]
    result = CliRunner().invoke(app, [*args, "--bootstrap", "10"])
    text = " ".join(result.output.split())
    assert result.exit_code == 2 and "EV102" in text, result.output
    written = (
        sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) if out.exists() else []
    )
    assert written == [], written
    assert "nothing was written" in text and "Traceback" not in result.output, result.output
    monkeypatch.undo()
    again = CliRunner().invoke(app, [*args, "--bootstrap", "10"])
    assert again.exit_code == 0 and (out / "results.json").is_file() and (out / "report.md").is_file()


def test_nothing_was_written_is_said_only_when_true(build_dir: Path, tmp_path: Path, api) -> None:
    api.state.sticky = "server_error"
    out = tmp_path / "run"
    result = CliRunner().invoke(app, [*eval_args(build_dir, out, api.url), "--max-attempts", "1"])
    assert result.exit_code == 2 and "1 error(s); nothing was written." in result.output
    assert not out.exists()


def test_a_score_refused_after_waiting_for_the_folder_does_not_claim_the_other_runs_files(
    build_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two scores of different files into one --out: the second waits for the lock while the first writes,
    then is refused (EV007). Its account is of what *it* changed — nothing — not of the first one's files,
    which a rerun could never "write whole" (issue 23 §12)."""
    from jbcompile.evaluate import score
    from jbcompile.evaluate.dataset import load_rows

    rows = load_rows(str(build_dir), "lite").rows
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for path, shift in ((first, 0), (second, 1)):
        path.write_text(
            "".join(
                json.dumps({"example_id": r["example_id"], "pred": (r["label"] + shift) % 3}) + "\n"
                for r in rows
            ),
            "utf-8",
        )
    out = tmp_path / "cs2"

    def args(path: Path) -> list[str]:
        return ["score", str(path), "--dataset", str(build_dir), "--prediction-field", "pred",
                "--out", str(out), "--bootstrap", "10"]  # fmt: skip

    real_writing = score.writing
    other_done: list[str] = []

    def lock_taken_after_the_other_run(*given, **kwargs):  # type: ignore[no-untyped-def]
        if not other_done:  # the other command held the folder first and wrote its scores meanwhile
            monkeypatch.setattr(score, "writing", real_writing)
            done = CliRunner().invoke(app, args(first))
            other_done.append(done.output)
            assert done.exit_code == 0, done.output
        return real_writing(*given, **kwargs)

    monkeypatch.setattr(score, "writing", lock_taken_after_the_other_run)
    result = CliRunner().invoke(app, args(second))
    text = " ".join(result.output.split())
    assert other_done and result.exit_code == 2 and "EV007" in text, result.output
    theirs = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert "results.json" in theirs  # the other run's scores are there, untouched …
    assert "kept" not in text.partition("EV007")[2], result.output  # … and not claimed as this run's
    assert f"nothing was written; {out} is as it was" in text, result.output


def test_an_eval_refused_after_waiting_for_the_folder_does_not_claim_the_other_runs_files(
    build_dir: Path, tmp_path: Path, api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same for eval: another eval with other settings held the folder and finished while this one
    waited for it; this one is refused (EV007) and says it wrote nothing."""
    from jbcompile.evaluate import run

    out = tmp_path / "run"
    real_claim = run.claim
    other_done: list[str] = []

    def claimed_after_the_other_run(*given, **kwargs):  # type: ignore[no-untyped-def]
        if not other_done:
            monkeypatch.setattr(run, "claim", real_claim)
            done = CliRunner().invoke(app, [*eval_args(build_dir, out, api.url), "--limit", "4"])
            other_done.append(done.output)
            assert done.exit_code == 0, done.output
        return real_claim(*given, **kwargs)

    monkeypatch.setattr(run, "claim", claimed_after_the_other_run)
    result = CliRunner().invoke(
        app, [*eval_args(build_dir, out, api.url), "--limit", "4", "--temperature", "0.5"]
    )
    text = " ".join(result.output.split())
    assert other_done and result.exit_code == 2 and "EV007" in text, result.output
    assert (out / "predictions.jsonl").is_file()
    assert f"nothing was written; {out} is as it was" in text, result.output
