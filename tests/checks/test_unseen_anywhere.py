"""JA120 and JA121 wherever a character stands in a source file, not only in its values: a comment, a
key, a flow mapping, a block scalar's header, the rules, the translations, CHANGELOG.md ("Trojan Source").

Each character is reported once, at its own line:col, with the severity its kind has in a value (a
control or bidirectional character is an error, an invisible one a warning); values are reported as
before."""

from __future__ import annotations

from pathlib import Path

import pytest
from jbcompile.checks import fix_sources, run_checks
from jbcompile.cli import app
from jbcompile.diagnostics import Diagnostic, Severity, render
from jbcompile.project import load_project
from typer.testing import CliRunner

RLO, RLI, ZWSP, ZWJ = "\u202e", "\u2067", "\u200b", "\u200d"
TEMPLATE = "templates/Age/t.yaml"


def edit(root: Path, relative: str, old: str, new: str) -> None:
    path = root / relative
    text = path.read_bytes().decode("utf-8")  # as written: CR LF line ends stay
    assert text.count(old) == 1, (relative, old)
    path.write_bytes(text.replace(old, new).encode("utf-8"))


def unseen(root: Path) -> list[Diagnostic]:
    codes = {"JA120", "JA121"}
    return [d for d in run_checks(load_project(root), only=codes) if d.code in codes]


def the_one(root: Path, code: str, char: str, relative: str) -> Diagnostic:
    """The single finding of ``code``; its line:col holds ``char`` in ``relative``."""
    found = unseen(root)
    assert len(found) == 1, render(found)
    (finding,) = found
    assert finding.code == code and finding.path and finding.line and finding.col, render(found)
    assert Path(finding.path).resolve() == (root / relative).resolve(), render(found)
    line = (root / relative).read_text("utf-8-sig").splitlines()[finding.line - 1]
    assert line[finding.col - 1] == char, (render(found), line)
    expected = Severity.ERROR if code == "JA120" else Severity.WARNING
    assert finding.severity is expected and finding.hint, render(found)
    return finding


def test_a_bidirectional_override_in_a_comment_of_a_template_is_an_error(sources) -> None:
    root = sources()
    edit(root, TEMPLATE, "id: age-smartphone\n", f"id: age-smartphone  # 注記 {RLO}ではない\n")
    finding = the_one(root, "JA120", RLO, TEMPLATE)
    assert "in a comment" in finding.message and finding.line == 1


def test_a_zero_width_space_on_a_comment_line_of_a_vocab_file_is_a_warning_left_to_the_author(
    sources,
) -> None:
    root = sources()
    edit(root, "vocab/Age.yaml", "groups:\n", f"# 年齢の{ZWSP}グループ\ngroups:\n")
    finding = the_one(root, "JA121", ZWSP, "vocab/Age.yaml")
    assert "in a comment" in finding.message and not finding.edits  # --fix edits values only
    assert "edits values only" in (finding.hint or "")


def test_a_comment_inside_a_flow_mapping(sources) -> None:
    root = sources()
    edit(
        root,
        TEMPLATE,
        "negative:\n    text: 設定に手間取っていたのは誰ですか？\n    answer: NAME2\n",
        f"negative: {{text: 設定に手間取っていたのは誰ですか？,  # 否定{RLI}\n    answer: NAME2}}\n",
    )
    assert load_project(root).templates[0].model.questions.negative.answer == "NAME2"
    finding = the_one(root, "JA120", RLI, TEMPLATE)
    assert "in a comment" in finding.message


def test_the_header_of_a_block_scalar_and_its_content(sources) -> None:
    """A character on a block scalar's header line is in a comment; one in its content is the value's,
    reported once, at its place."""
    root = sources()
    edit(root, TEMPLATE, "disambiguating_context: ", f"disambiguating_context: >-  # 文脈{RLO}\n  ")
    finding = the_one(root, "JA120", RLO, TEMPLATE)
    assert "in a comment" in finding.message
    edit(root, TEMPLATE, f"# 文脈{RLO}", "# 文脈")
    edit(root, TEMPLATE, "説明を聞いただけで", f"説明を{RLO}聞いただけで")
    finding = the_one(root, "JA120", RLO, TEMPLATE)
    assert "in the text" in finding.message and finding.key_path == ("disambiguating_context",)


def test_a_key_of_a_rules_file_in_a_flow_mapping_and_a_value_fixed_by_fix(sources) -> None:
    root = sources({"files": {"rules/lexicon.yaml": f"event_months: {{お{ZWSP}盆: [8]}}\n"}})
    finding = the_one(root, "JA121", ZWSP, "rules/lexicon.yaml")
    assert f"in the key {'お' + ZWSP + '盆'!r}" in finding.message and not finding.edits
    assert finding.key_path == ("event_months", f"お{ZWSP}盆")
    (root / "rules/lexicon.yaml").write_text(f"known_words: [スマ{ZWSP}ホ]\n", "utf-8")
    finding = the_one(root, "JA121", ZWSP, "rules/lexicon.yaml")
    assert "in the text" in finding.message and finding.edits
    report = fix_sources(root, only=["JA121"])
    assert report.converged and report.edits_applied == 1
    assert (root / "rules/lexicon.yaml").read_text("utf-8") == "known_words: [スマホ]\n"
    assert not unseen(root)


def test_a_control_in_a_comment_of_a_rules_file_and_an_escaped_one_in_a_value(sources) -> None:
    root = sources({"files": {"rules/normalization.yaml": f"# 置換表 {RLO}\nreplace: {{'?': '？'}}\n"}})
    finding = the_one(root, "JA120", RLO, "rules/normalization.yaml")
    assert "in a comment" in finding.message
    (root / "rules/normalization.yaml").write_text('replace: {"?": "？\\u202e"}\n', "utf-8")
    found = unseen(root)
    assert [(d.code, d.key_path, d.line) for d in found] == [("JA120", ("replace", "?"), 1)], render(found)


def test_an_escaped_key_shows_and_is_not_reported_a_written_one_is(sources) -> None:
    """What a reviewer sees of a key is the file: "\\u200b" is written out (a rule about that character)."""
    root = sources({"files": {"rules/normalization.yaml": 'replace: {"\\u200b": "", "?": "？"}\n'}})
    assert not unseen(root)
    edit(root, "rules/normalization.yaml", '"\\u200b": ""', f'"{ZWSP}": ""')
    finding = the_one(root, "JA121", ZWSP, "rules/normalization.yaml")
    assert f"in the key {ZWSP!r}" in finding.message


def test_the_translations_and_the_changelog_are_read_too(sources) -> None:
    root = sources(
        {
            "files": {
                "translations/glossary.yaml": f"entries:\n  they: かれら  # 三人称{ZWSP}複数\n",
                "CHANGELOG.md": f"# Changelog\n\n## 0.1.0\n\n- 最初の{RLO}版\n",
            }
        }
    )
    found = unseen(root)
    assert [(Path(d.path or "").name, d.code, d.line) for d in found] == [
        ("CHANGELOG.md", "JA120", 5),
        ("glossary.yaml", "JA121", 2),
    ], render(found)
    assert "in the file" in found[0].message and "in a comment" in found[1].message


def test_line_breaks_a_byte_order_mark_and_ordinary_text_are_not_reported(sources) -> None:
    """CR LF line ends, a byte order mark that opens a file, tabs and ideographic spaces are no findings;
    a character in such a file is found at its line:col all the same."""
    root = sources()
    for relative in (TEMPLATE, "vocab/Age.yaml", "dataset.yaml"):
        path = root / relative
        text = path.read_text("utf-8").replace("\n", "\r\n")
        path.write_bytes(("\ufeff# 全角　スペースと\tタブ\r\n" + text).encode("utf-8"))
    (root / "README.md").write_text("# ベンチマーク\n\n表\t1　説明\r\n", "utf-8")
    assert not unseen(root)
    edit(root, "vocab/Age.yaml", "groups:\r\n", f"groups:  # {RLO}\r\n")
    assert the_one(root, "JA120", RLO, "vocab/Age.yaml").line == 3


def test_a_value_is_reported_once_and_as_before(sources) -> None:
    root = sources({"template": {"stereotype": f"高齢者は{ZWJ}新しい機械の使い方を覚えられない"}})
    edit(root, TEMPLATE, "stereotype:", f"# {ZWJ}\nstereotype:")
    found = unseen(root)
    assert [(d.code, d.key_path, "in the text" in d.message) for d in found] == [
        ("JA121", (), False),
        ("JA121", ("stereotype",), True),
    ], render(found)
    assert found[1].message == "U+200D ZERO WIDTH JOINER in the text: it shows nothing"


def test_a_suppression_on_the_line_silences_a_comment_finding(sources) -> None:
    root = sources()
    edit(root, TEMPLATE, "id: age-smartphone\n", f"id: age-smartphone  # 絵文字{ZWJ}の一部\n")
    assert "in a comment" in the_one(root, "JA121", ZWJ, TEMPLATE).message
    edit(root, TEMPLATE, "# 絵文字", "# jbcompile: ignore[JA121] 絵文字")
    assert not unseen(root)


@pytest.mark.parametrize("command", ["check", "build"])
def test_check_and_build_refuse_a_bidirectional_override_in_a_comment(
    sources, tmp_path: Path, command: str
) -> None:
    root = sources()
    edit(root, TEMPLATE, "category: Age\n", f"category: Age  # {RLO}\n")
    out = tmp_path / "build"
    args = ["--sources", str(root)] + (["--out", str(out)] if command == "build" else [])
    result = CliRunner().invoke(app, [command, *args])
    assert result.exit_code == 1, result.output  # a lint finding: 1 for both (README, "Diagnostics")
    assert f"{TEMPLATE}:2:18: JA120 U+202E RIGHT-TO-LEFT OVERRIDE in a comment" in result.output
    assert RLO not in result.output and not out.exists()
