"""The rules of :mod:`jbcompile.outputs` on their own: overlaps, claims, the journal and its recovery."""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

import pytest
from jbcompile import outputs
from jbcompile.diagnostics import DiagnosticError
from jbcompile.fsio import write_atomic
from jbcompile.outputs import Output, claim, lock_path, overlaps, settle

# ------------------------------------------------------------------------------------------ overlaps


def test_an_output_is_never_an_input_nor_holds_one_nor_lies_inside_one(tmp_path: Path) -> None:
    data = tmp_path / "in" / "data.json"
    data.parent.mkdir()
    data.write_text("{}")
    cases = {data: "is", data.parent: "holds", data / "x": "lies inside", tmp_path / "elsewhere": None}
    for place, relation in cases.items():
        found = overlaps([Output("--out", place)], [("the input", data)])
        expected = [] if relation is None else [f"--out {place} {relation} the input ({data})"]
        assert [d.message.split(";")[0] for d in found] == expected


def test_links_are_followed_and_outputs_are_checked_against_each_other(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    link = tmp_path / "link"
    link.symlink_to(data)
    assert [d.code for d in overlaps([Output("--out", link / "run", "B003")], [("x", data)])] == ["B003"]
    (data / "x").write_text("x")
    os.link(data / "x", tmp_path / "hard")  # another name of the same file
    assert "is x" in overlaps([Output("--report", tmp_path / "hard")], [("x", data / "x")])[0].message
    two = [Output("--out", tmp_path / "out"), Output("--report", tmp_path / "out" / "r.json")]
    assert "lies inside --out" in overlaps(two, [])[0].message


def test_a_folder_replaced_whole_is_never_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert overlaps([Output("--out", Path("."), whole=True)], [])
    assert overlaps([Output("--out", Path(".."), whole=True)], [])
    assert not overlaps([Output("--out", Path("."))], [])  # written into, not replaced
    assert not overlaps([Output("--out", Path("new"), whole=True)], [("a Hub id", "org/name")])


# -------------------------------------------------------------------------------------------- claims


def _journal(place: Path) -> list[dict]:
    return [json.loads(line) for line in lock_path(place).read_text().splitlines()]


def test_a_commit_changes_every_file_or_none_when_a_rename_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {tmp_path / "s" / name: f"old {name}" for name in ("a", "b", "c")}
    for path, text in files.items():
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    real, calls = os.replace, []

    def second_fails(source: str, target: str) -> None:
        calls.append(target)
        if len(calls) == 2:
            raise PermissionError(13, "Permission denied", target)
        real(source, target)

    monkeypatch.setattr(outputs.os, "replace", second_fails)
    with claim(tmp_path / "s") as held, pytest.raises(PermissionError):
        held.commit({path: f"new {path.name}" for path in files})
    monkeypatch.setattr(outputs.os, "replace", real)
    assert {path: path.read_text() for path in files} == files
    assert sorted(p.name for p in (tmp_path / "s").iterdir()) == ["a", "b", "c"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s"]


def _place_of_old_files(tmp_path: Path, *names: str) -> Path:
    place = tmp_path / "s"
    place.mkdir()
    for name in names:
        (place / name).write_text(f"old {name}")
    return place


def _journal_of_a_dead_writer(place: Path, *entries: dict, tail: str = "") -> None:
    header = {"jbcompile": 1, "pid": 1, "command": "test", "place": place.name}
    lock_path(place).write_text("".join(json.dumps(e) + "\n" for e in (header, *entries)) + tail)


def test_a_killed_commit_is_rolled_forward_and_its_leftovers_removed(tmp_path: Path) -> None:
    place = _place_of_old_files(tmp_path, "a", "b")
    # what a writer killed after journaling its commit and renaming one file of two leaves
    staged_b = place / ".b.jbcompile-0123abcd.tmp"
    staged_b.write_text("new b")
    aside_a = place / ".a.jbcompile-old-4567abcd.tmp"
    os.link(place / "a", aside_a)
    (place / "a").write_text("new a")
    _journal_of_a_dead_writer(
        place,
        {"temp": "s/.a.jbcompile-89abcdef.tmp"},
        {"temp": "s/.b.jbcompile-0123abcd.tmp"},
        {"commit": [["s/.a.jbcompile-89abcdef.tmp", "s/a", "s/.a.jbcompile-old-4567abcd.tmp"],
                    ["s/.b.jbcompile-0123abcd.tmp", "s/b", "s/.b.jbcompile-old-cdef0123.tmp"]]},
        tail='{"do',  # a last line cut short
    )  # fmt: skip
    settle(place)
    assert (place / "a").read_text() == "new a" and (place / "b").read_text() == "new b"
    assert sorted(p.name for p in place.iterdir()) == ["a", "b"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s"]


def test_a_commit_taken_back_is_never_rolled_forward(tmp_path: Path) -> None:
    place = _place_of_old_files(tmp_path, "a")
    (place / ".a.jbcompile-0123abcd.tmp").write_text("new a")
    _journal_of_a_dead_writer(
        place,
        {"temp": "s/.a.jbcompile-0123abcd.tmp"},
        {"commit": [["s/.a.jbcompile-0123abcd.tmp", "s/a", "s/.a.jbcompile-old-4567abcd.tmp"]]},
        {"undone": True},
    )
    settle(place)
    assert (place / "a").read_text() == "old a" and sorted(p.name for p in place.iterdir()) == ["a"]


def test_a_lock_file_that_is_not_ours_is_refused_and_kept(tmp_path: Path) -> None:
    lock = lock_path(tmp_path / "out")
    lock.write_text("my own notes\n")
    with pytest.raises(DiagnosticError) as error, claim(tmp_path / "out"):
        raise AssertionError("never reached")
    assert [d.code for d in error.value.diagnostics] == ["CL011"]
    assert lock.read_text() == "my own notes\n"
    settle(tmp_path / "out")
    assert lock.read_text() == "my own notes\n"


def test_a_live_writers_journal_is_left_to_it(tmp_path: Path) -> None:
    place = tmp_path / "out"
    place.mkdir()
    temp = place / ".x.jbcompile-0123abcd.tmp"
    temp.write_text("being written")
    lock = lock_path(place)
    lock.write_text(json.dumps({"jbcompile": 1}) + "\n" + json.dumps({"temp": "out/" + temp.name}) + "\n")
    fd = os.open(lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # as another process holding the place
        settle(place)
        assert temp.exists() and lock.exists()
    finally:
        os.close(fd)
    settle(place)
    assert not temp.exists() and not lock.exists()


def test_writes_inside_a_held_place_are_journaled_and_share_its_lock(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with claim(out) as held:
        with claim(out / "sub") as inner:
            assert inner.journal is held and not lock_path(out / "sub").exists()
        write_atomic(out / "results.json", "{}")
        temps = [e["temp"] for e in _journal(out) if "temp" in e]
        assert len(temps) == 1 and temps[0].startswith("out/.results.json.jbcompile-")
        with held.replaced_folder("charts", out / "charts") as staging:
            (staging / "a.png").write_bytes(b"png")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert sorted(p.name for p in out.iterdir()) == ["charts", "results.json"]


def test_folders_made_for_a_failed_write_are_removed(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), claim(tmp_path / "a" / "b" / "out") as held:
        held.temp_folder(tmp_path / "a" / "b" / "out" / "charts", "charts")
        raise RuntimeError("refused")
    assert list(tmp_path.iterdir()) == []


def test_a_refusal_once_the_place_is_held_leaves_no_folder(mini_sources: Path, tmp_path: Path) -> None:
    """An error after the folders for the lock were made (an empty build here) removes them again."""
    from jbcompile.cli import app
    from typer.testing import CliRunner

    for template in (mini_sources / "templates").rglob("*.yaml"):
        template.unlink()
    out = tmp_path / "new" / "deep" / "build"
    result = CliRunner().invoke(app, ["build", "--sources", str(mini_sources), "--out", str(out)])
    assert result.exit_code == 2 and "B002" in result.output, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sources"]
