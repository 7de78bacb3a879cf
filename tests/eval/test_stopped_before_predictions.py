"""An eval that stops before its first prediction — a two-turn setting's first turns cut off by the
server, EV201 refusing a model whose replies reason, an --overwrite run into a new folder, or no reply at
all — leaves a folder the same command resumes (or none), and says so truly: a rerun sends only the
missing requests, and no message names a file that is not there or claims replies it never got."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from jbcompile.cli import app
from typer.testing import CliRunner

from tests.designs import conftest as designs
from tests.eval.fake_api import FakeAPI

ROWS = 12
FIRST_BATCH = 8  # a remote backend's rows per batch: 4 × --concurrency 2


@pytest.fixture(scope="module")
def kinds_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The designs' tiny benchmark (a sobaco config with its two-turn settings)."""
    return designs.kinds_build.__wrapped__(tmp_path_factory)


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "EMPTY")


@pytest.fixture
def api():  # type: ignore[no-untyped-def]
    with FakeAPI() as server:
        yield server


def run(api: FakeAPI, build: Path, out: Path, *extra: str) -> tuple[int, str, int]:
    """`eval` of the sobaco config against the fake: exit code, output (one line), requests it sent."""
    before = api.state.requests
    args = ["eval", "-m", "fake-model", "-d", str(build), "--config", "sobaco", "--out", str(out),
            "--backend", "openai", "--base-url", api.url + "/v1", "--chat", "--protocol", "sobaco",
            "--limit", str(ROWS), "--max-attempts", "2", "--concurrency", "2", "--bootstrap", "0",
            "--quiet", *extra]  # fmt: skip
    result = CliRunner().invoke(app, args)
    return result.exit_code, " ".join(result.output.split()), api.state.requests - before


def files_in(out: Path) -> list[str]:
    return sorted(path.name for path in out.iterdir()) if out.exists() else []


def records(out: Path) -> list[dict]:
    lines = (out / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
    return sorted((json.loads(line) for line in lines), key=lambda record: str(record["example_id"]))


def replies(out: Path) -> int:
    return len((out / "requests.jsonl").read_text(encoding="utf-8").splitlines())


@pytest.mark.parametrize("setting", ["cot-e-1", "cot-r-1"])
def test_a_stop_in_the_first_turns_is_resumed_by_the_same_command(
    kinds_build: Path, tmp_path: Path, api: FakeAPI, setting: str
) -> None:
    """The server fails after 8 of the 12 first turns: the folder holds only the request cache, and the
    same command resumes it — the 4 missing first turns and the 12 final turns are sent, nothing twice —
    to the predictions an uninterrupted run makes."""
    whole = tmp_path / "whole"
    assert run(api, kinds_build, whole, "--setting", setting)[::2] == (0, 2 * ROWS)
    api.state.received.clear()
    api.state.sticky, api.state.sticky_after = "server_error", api.state.requests + 8
    out = tmp_path / "run"
    code, text, _ = run(api, kinds_build, out, "--setting", setting)
    assert code == 2 and "EV303" in text, text
    assert files_in(out) == ["requests.jsonl"] and replies(out) == 8
    assert text.startswith(f"{out / 'requests.jsonl'}: EV303"), text
    assert f"kept {out / 'requests.jsonl'} (8 server replies, 8 new); run the same command again" in text
    answered = {prompt for prompt, count in api.state.received.items() if count == 1}
    api.state.sticky = None
    api.state.received.clear()
    code, text, sent = run(api, kinds_build, out, "--setting", setting)
    assert code == 0, text
    assert sent == 2 * ROWS - 8 and not answered & set(api.state.received)  # only the missing requests
    assert records(out) == records(whole)


def test_overwrite_runs_over_a_folder_holding_only_the_request_cache(
    kinds_build: Path, tmp_path: Path, api: FakeAPI
) -> None:
    """--overwrite works there too (the cache is kept, as --overwrite keeps it); a folder holding a file
    of the user's beside the cache is no run folder: refused (EV101), the file left as it is."""
    api.state.sticky, api.state.sticky_after = "server_error", 8
    out = tmp_path / "run"
    assert run(api, kinds_build, out, "--setting", "cot-e-1")[0] == 2 and files_in(out) == ["requests.jsonl"]
    api.state.sticky = None
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    (mixed / "requests.jsonl").write_bytes((out / "requests.jsonl").read_bytes())
    (mixed / "notes.txt").write_text("mine", encoding="utf-8")
    code, text, sent = run(api, kinds_build, mixed, "--setting", "cot-e-1", "--overwrite")
    assert code == 2 and "EV101" in text and sent == 0, text
    assert files_in(mixed) == ["notes.txt", "requests.jsonl"]
    code, text, sent = run(api, kinds_build, out, "--setting", "cot-e-1", "--overwrite")
    assert code == 0 and sent == 2 * ROWS - 8, text
    assert {"run.json", "predictions.jsonl", "results.json", "requests.jsonl"} <= set(files_in(out))


def test_an_overwrite_run_stopped_in_a_new_folder_is_resumed(
    kinds_build: Path, tmp_path: Path, api: FakeAPI
) -> None:
    """An --overwrite run writes no run.json until its results: stopped in a new folder, it leaves its
    hidden log and the request cache, which a rerun (with or without --overwrite) takes up."""
    api.state.sticky, api.state.sticky_after = "server_error", 4
    out = tmp_path / "run"
    plain = ("--setting", "basic-1", "--batch-size", "4", "--concurrency", "1")
    code, text, _ = run(api, kinds_build, out, *plain, "--overwrite")
    assert code == 2 and files_in(out) == [".predictions.overwrite.jsonl", "requests.jsonl"], text
    api.state.sticky = None
    code, text, sent = run(api, kinds_build, out, *plain)
    assert code == 0 and sent == ROWS - 4, text


@pytest.mark.parametrize("thinking", ["field", "inline"])
def test_ev201_says_what_it_kept_and_what_the_rerun_with_thinking_does(
    kinds_build: Path, tmp_path: Path, api: FakeAPI, thinking: str
) -> None:
    """A model that turns out to reason stops the protocol run (EV201) after its first batch was paid
    for: those replies are kept, but were decoded at temperature 0 for a model that answers at once — the
    stop says so, the same command stops again without sending anything, and the --thinking rerun the
    hint asks for runs in the same folder, sending its requests anew at the paper's temperature."""
    api.state.thinking = thinking
    out = tmp_path / "run"
    code, text, sent = run(api, kinds_build, out)
    assert code == 2 and "EV201" in text and sent == FIRST_BATCH, text
    assert files_in(out) == ["requests.jsonl"] and replies(out) == FIRST_BATCH
    assert f"kept {out / 'requests.jsonl'} ({FIRST_BATCH} server replies, {FIRST_BATCH} new)" in text, text
    assert "decoded at temperature 0 for a model that answers at once" in text
    assert "a rerun with --thinking decodes at temperature 0.6, so it sends its requests anew" in text
    assert "to resume" not in text
    code, text, sent = run(api, kinds_build, out)
    assert code == 2 and "EV201" in text and sent == 0 and "nothing was written" in text, text
    api.state.bodies.clear()
    code, text, sent = run(api, kinds_build, out, "--thinking")
    assert code == 0 and sent == ROWS, text
    assert Counter(body.get("temperature") for body in api.state.bodies) == {0.6: ROWS}
    assert len(records(out)) == ROWS


@pytest.mark.parametrize("setting", ["basic-1", "cot-e-1"])
@pytest.mark.parametrize("fault", ["rate_limit", "auth"])
def test_a_stop_before_any_reply_names_no_file_and_claims_no_reply(
    kinds_build: Path, tmp_path: Path, api: FakeAPI, setting: str, fault: str
) -> None:
    api.state.sticky = fault
    out = tmp_path / "run"
    code, text, _ = run(api, kinds_build, out, "--setting", setting, "--max-attempts", "1")
    assert code == 2 and ("EV303" in text or "EV305" in text), text
    assert text.startswith("EV30"), text  # no file named: none is there
    assert "jsonl" not in text and " kept" not in text and "1 error(s); nothing was written." in text
    assert not out.exists()
