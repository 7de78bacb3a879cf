"""The CLI end to end, as a user runs it: exit codes, messages, files written or not."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import cli, edit


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return cli(*args, cwd=cwd, columns="200")


def test_version_and_help() -> None:
    result = run("--version")
    assert result.returncode == 0 and result.stdout.startswith("jbcompile ")
    result = run("--help")
    assert result.returncode == 0
    for command in ("build", "stats", "schema"):
        assert command in result.stdout


def test_build_writes_the_folder(mini_sources: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run("build", "--sources", str(mini_sources), "--out", str(out), "--format", "parquet,jsonl")
    assert result.returncode == 0, result.stderr
    assert "lite 36" in result.stderr and "full 912" in result.stderr
    assert (out / "data/full/test-00000-of-00001.jsonl").read_text(encoding="utf-8").count("\n") == 912
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["version"] == "1.2.3"


def test_build_with_bad_sources_exits_2_and_writes_nothing(mini_sources: Path, tmp_path: Path) -> None:
    edit(mini_sources / "templates/Age/age-work.yaml", "group: young", "group: youth")
    edit(mini_sources / "templates/Age/age-phone.yaml", "origin: translated", "origin: stolen")
    out = tmp_path / "out"
    result = run("build", "--sources", str(mini_sources), "--out", str(out))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if ": R" in line or ": S" in line]
    assert any("age-work.yaml:8:18:" in line and "R002" in line for line in lines)
    assert any("age-phone.yaml:3:9: S002" in line for line in lines)
    assert not out.exists()


@pytest.mark.parametrize(
    ("broken", "args", "code", "expected"),
    [
        ("lint", [], 1, "JA101"),  # a lint rule's finding: the sources were read and judged
        ("yaml", [], 2, "Y001"),  # malformed YAML: the sources cannot be read
        ("none", ["--release"], 1, "JA118"),  # a release refused (unreviewed templates)
    ],
)
def test_build_exits_as_check_does_1_for_findings_2_for_unreadable_input(
    mini_sources: Path, tmp_path: Path, broken: str, args: list[str], code: int, expected: str
) -> None:
    template = mini_sources / "templates/Age/age-work.yaml"
    if broken == "lint":
        edit(template, "が参加した。", "が参加した。彼らの後ろには列ができていた。")
    elif broken == "yaml":
        edit(template, "group: young", "group: [young")
    out = tmp_path / "out"
    built = run("build", "--sources", str(mini_sources), "--out", str(out), *args)
    assert built.returncode == code and f" {expected} " in built.stderr, built.stderr
    assert "Traceback" not in built.stderr and not out.exists()
    checked = run("check", "--sources", str(mini_sources), *args)
    assert checked.returncode == code, checked.stderr


def test_build_diagnostics_as_github_annotations(mini_sources: Path, tmp_path: Path) -> None:
    edit(mini_sources / "templates/Age/age-work.yaml", "group: young", "group: youth")
    result = run(
        "build", "--sources", str(mini_sources), "--out", str(tmp_path / "o"), "--diagnostics", "github"
    )
    assert result.returncode == 2
    assert "::error file=" in result.stderr and "title=R002" in result.stderr


def test_stats_table_and_json(mini_sources: Path) -> None:
    result = run("stats", "--sources", str(mini_sources), "--json")
    assert result.returncode == 0, result.stderr
    table = {entry["category"]: entry for entry in json.loads(result.stdout)}
    assert table["Age"]["full"] == 576 + 144 and table["Age"]["lite_templates"] == 2
    assert table["Disability_status"]["lite"] == 12
    result = run("stats", "--sources", str(mini_sources))
    assert "Disability_status" in result.stdout and "total" in result.stdout


def test_stats_says_what_check_says_of_characters_a_reader_cannot_see(mini_sources: Path) -> None:
    """A bidi override in a filler, a zero-width space in another, an isolate in the title: stats counts
    the rows but reports each character as check does (same code, file:line:col), and what it prints
    shows the character rather than letting it reorder the line."""
    vocab = mini_sources / "vocab" / "Age.yaml"
    edit(vocab, "{ja: 二十代の男性,", "{ja: 二十代の\u202e男性,")
    edit(vocab, "{ja: 高齢の女性,", "{ja: 高齢の\u200b女性,")
    edit(mini_sources / "dataset.yaml", "pretty_name: Mini bench", "pretty_name: Mini\u2067 bench")
    expected = {
        "JA120": f"{vocab}:11:25: JA120 U+202E RIGHT-TO-LEFT OVERRIDE",
        "JA121": f"{vocab}:7:24: JA121 [warning] U+200B ZERO WIDTH SPACE",
        "title": f"{mini_sources / 'dataset.yaml'}:3:18: JA120 U+2067 RIGHT-TO-LEFT ISOLATE",
    }
    checked = run("check", "--sources", str(mini_sources))
    assert checked.returncode == 1
    for line in expected.values():
        assert line in checked.stderr, checked.stderr
    for args in (["--json"], []):
        counted = run("stats", "--sources", str(mini_sources), *args)
        assert counted.returncode == 0, counted.stderr
        for line in expected.values():
            assert line in counted.stderr, counted.stderr
        assert "`jbcompile build` refuses them until the 2 error(s) above are fixed" in counted.stderr
        printed = counted.stdout + counted.stderr
        assert "\u2067" not in printed and "\u202e" not in printed and "\u200b" not in printed
    assert "Mini<U+2067> bench" in counted.stdout  # the table's title
    assert json.loads(run("stats", "--sources", str(mini_sources), "--json").stdout)  # JSON stays JSON


def test_a_table_shows_unseen_characters_of_any_cell(capsys) -> None:
    from jbcompile.cli.app import out_console, print_table
    from rich.table import Table
    from rich.text import Text

    table = Table(title="t\u202eitle")
    table.add_column("cell")
    table.add_row(Text("ab\u200bcd", style="bold"))
    table.add_row("e\u2066f")
    print_table(table)
    out_console.print(Text.assemble(("x\u202e", "red"), "y"))
    printed = capsys.readouterr().out
    assert "t<U+202E>itle" in printed and "ab<U+200B>cd" in printed and "e<U+2066>f" in printed
    assert "x<U+202E>y" in printed


@pytest.mark.parametrize("file", ["dataset", "vocab", "template", "pronouns", "normalization", "lexicon"])
def test_schema_is_generated_from_the_models(file: str) -> None:
    result = run("schema", file)
    assert result.returncode == 0
    schema = json.loads(result.stdout)
    if file == "template":  # one member per template kind
        members = {ref["$ref"].rsplit("/", 1)[-1] for ref in schema.get("anyOf", [])} or {schema["title"]}
        assert "BbqTemplate" in members
        bbq = schema.get("$defs", {}).get("BbqTemplate", schema)
        assert "persons" in bbq["properties"]
        assert "disambiguating_context" in bbq["required"]
    else:
        assert schema["type"] == "object"


def test_schema_validates_the_sources(mini_sources: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    import yaml

    schema = json.loads(run("schema", "template").stdout)
    for path in (mini_sources / "templates").rglob("*.yaml"):
        jsonschema.validate(yaml.safe_load(path.read_text(encoding="utf-8")), schema)


def test_default_sources_are_the_bundled_benchmark(tmp_path: Path) -> None:
    result = run("stats", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    categories = {entry["category"] for entry in json.loads(result.stdout)}
    assert "Age" in categories


def test_a_diagnostic_at_line_100_prints_its_position_not_an_emoji(
    mini_sources: Path, tmp_path: Path
) -> None:
    path = mini_sources / "templates/Age/age-work.yaml"
    path.write_text("\n" * 90 + path.read_text(encoding="utf-8").replace("{{NAME1}}と", "{{NAME9}}と", 1))
    result = run("build", "--sources", str(mini_sources), "--out", str(tmp_path / "b"))
    assert result.returncode == 2
    assert "age-work.yaml:100:" in result.stderr and "💯" not in result.stderr


def test_a_diagnostic_about_no_file_has_no_placeholder_path() -> None:
    result = run("build", "--diagnostics", "xml")
    assert result.returncode == 2
    assert result.stderr.startswith("CL001 ") and "<input>" not in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["build", "--diagnostics", "xml"],
        ["build", "--lang", "fr"],
        ["build", "--format", "csv"],
        ["build", "--cards", "/nonexistent"],
        ["stats", "--lang", "zz"],
        ["schema", "nope"],
        ["check", "--format", "xml"],
        ["check", "--explain", "NOPE"],
        ["publish", "--format", "yaml", "--dry-run"],
        ["verify", "--repo", "not a repo", "--revision", "v1"],
        ["diff", "a", "b", "--format", "html"],
    ],
)
def test_every_bad_option_is_a_coded_diagnostic_and_exit_2(args: list[str]) -> None:
    result = run(*args)
    assert result.returncode == 2, result.stderr
    assert "CL00" in result.stderr and "Traceback" not in result.stderr


def test_stats_prints_whole_numbers_in_80_columns(bundled_sources: Path) -> None:
    env = dict(os.environ, COLUMNS="80", NO_COLOR="1")
    result = subprocess.run(
        [sys.executable, "-m", "jbcompile.cli", "stats", "--sources", str(bundled_sources)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "…" not in result.stdout
    assert "sobaco_dummy templates" in result.stdout and "Hierarchical_relationship" in result.stdout
    # counts are grouped by thousands, as build and audit print them
    (total,) = [line.split("│")[1:-1] for line in result.stdout.splitlines() if "│ total" in line]
    assert all(re.fullmatch(r"\d{1,3}(,\d{3})*", cell.strip()) for cell in total[1:]), total
    assert any("," in cell for cell in total), total


def test_every_url_printed_has_its_credentials_redacted() -> None:
    from jbcompile.diagnostics import Diagnostic, render
    from jbcompile.publish.hub import HubSession, hub_problem
    from jbcompile.redaction import redact

    assert redact("see http://user:pass@host:8080/x and https://tok@hub.example") == (
        "see http://***@host:8080/x and https://***@hub.example"
    )
    session = HubSession(api=None, endpoint="http://user:s3cret@127.0.0.1:9", token=None)
    problem = hub_problem(
        ConnectionError("refused by http://user:s3cret@127.0.0.1:9/api"), session, "reading"
    )
    for fmt in ("text", "json", "github"):
        assert "s3cret" not in render([problem], fmt)
    leaked = Diagnostic(code="P009", message="GET https://a:b@x.org failed", hint="check https://a:b@x.org")
    assert "a:b@" not in render([leaked], "text") and "a:b@" not in render([leaked], "json")


def _boom(setup: str, body: str) -> subprocess.CompletedProcess:
    """`jbcompile boom`, a command added for the test whose body raises what no command handles."""
    script = (
        "import sys; from jbcompile.cli import main, app\n"
        + setup
        + "@app.command('boom')\n"
        + f"def boom():\n    {body}\n"
        + "sys.argv = ['jbcompile', 'boom']; main()\n"
    )
    env = dict(os.environ, NO_COLOR="1")
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )


def test_an_os_error_no_command_handled_is_a_diagnostic_not_a_traceback(tmp_path: Path) -> None:
    result = _boom("", "open('/proc/nonexistent/x', 'w')")
    assert result.returncode == 2 and "CL002" in result.stderr and "Traceback" not in result.stderr


def test_a_recursion_no_command_handled_names_the_command_not_a_file() -> None:
    """A RecursionError where no file was passed (e.g. a draw of 1,000 shots) must not blame a file: CL003
    names the command and the step it was in."""
    result = _boom(
        "from jbcompile.evaluate import selection\n"
        "def deep(n): return deep(n + 1)\n"
        "selection.deep = deep; deep.__module__ = selection.__name__\n"
        "deep.__code__ = deep.__code__.replace(co_filename=selection.__file__)\n",
        "deep(0)",
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert "CL003 `jbcompile boom` recursed too deeply in evaluate.selection.deep" in result.stderr
    assert "the input is" not in result.stderr and "check the file you passed" not in result.stderr


@pytest.mark.parametrize("target", ["afile", "afile/sub"])
def test_init_where_a_file_stands_names_the_file(tmp_path: Path, target: str) -> None:
    """`init afile` said only "File exists (EEXIST)" (and `init afile/sub` "Not a directory")."""
    (tmp_path / "afile").write_text("mine\n", encoding="utf-8")
    result = run("init", target, cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert "CL002" in result.stderr and "afile is a file, not a folder" in result.stderr, result.stderr
    assert "EEXIST" not in result.stderr and "ENOTDIR" not in result.stderr
    assert (tmp_path / "afile").read_text(encoding="utf-8") == "mine\n"


def test_import_of_json_nested_100000_deep_is_a_diagnostic(tmp_path: Path) -> None:
    deep = tmp_path / "deep.jsonl"
    deep.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    result = run("import", "bbq-jsonl", str(deep), "--out", str(tmp_path / "sources"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "CL003" in result.stderr or "IM0" in result.stderr
    assert not (tmp_path / "sources").exists()


def test_import_exits_1_when_it_reported_errors(tmp_path: Path) -> None:
    from tests.importers.conftest import EN_CLASS_A, generate_rows, write_jsonl

    rows = generate_rows([EN_CLASS_A], "en")
    odd = rows[0]["context"]
    for row in rows:
        if row["context_condition"] == "disambig" and row["context"].startswith(odd):
            row["context"] = row["context"].replace("but the young woman left", "but the newcomer left")
    data = write_jsonl(tmp_path / "rows.jsonl", rows)
    result = run("import", "bbq-jsonl", str(data), "--out", str(tmp_path / "sources"))
    assert "1 error(s)" in result.stderr and result.returncode == 1, result.stderr


def test_the_consoles_redact_whatever_a_command_prints(capsys) -> None:
    from jbcompile.cli.app import err_console, out_console

    out_console.print("endpoint http://user:pw@hub.local/api, token hf_abcdefghijklmnopqrstuvwx")
    err_console.print("retrying https://key@api.example.com/v1", markup=False)
    captured = capsys.readouterr()
    assert "user:pw" not in captured.out and "hf_abcdefghijklmnopqrstuvwx" not in captured.out
    assert "http://***@hub.local/api" in captured.out and "https://***@api.example.com" in captured.err


def test_build_diagnostics_as_json_are_one_document_even_when_the_write_fails(
    mini_sources: Path, tmp_path: Path
) -> None:
    cards = tmp_path / "cards"
    cards.mkdir()
    (cards / "README.md.j2").write_text("{{ no_such_value }}\n")  # fails after the checks warned
    args = ["build", "--sources", str(mini_sources), "--out", str(tmp_path / "out"), "--diagnostics", "json"]
    refused = run(*args, "--cards", str(cards))
    assert refused.returncode == 2
    records = json.loads(refused.stdout)  # one JSON document, not one per stage
    assert {"B005", "JA108"} <= {r["code"] for r in records}


def test_outside_a_terminal_lines_and_tables_are_never_folded(mini_sources: Path, tmp_path: Path) -> None:
    """A pipe or a CI log gets whole lines: a path or a template id split at column 80 cannot be found."""
    out = tmp_path / ("a-build-folder-with-a-long-name-" * 3) / "build"
    long_id = "age-work-" + "with-a-very-long-template-identifier-" * 3
    template = mini_sources / "templates/Age/age-work.yaml"
    edit(template, "id: age-work", f"id: {long_id}")
    template.rename(template.with_name(f"{long_id}.yaml"))

    built = cli("build", "--sources", str(mini_sources), "--out", str(out))
    assert built.returncode == 0, built.stderr
    assert any(line.startswith("built ") and f"→ {out}  (lite" in line for line in built.stderr.splitlines())
    assert str(mini_sources) in built.stderr.splitlines()[0]
    script = (
        "from rich.table import Table\n"
        "from jbcompile.cli.app import out_console, print_table\n"
        "table = Table(title='import report')\n"
        "table.add_column('template', overflow='fold')\n"
        "table.add_column('rows', justify='right')\n"
        f"table.add_row({long_id!r}, '12')\n"
        "print_table(table)\n"
        f"out_console.print('wrote ' + {str(out)!r})\n"
    )
    env = {key: value for key, value in os.environ.items() if key != "COLUMNS"}
    printed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60
    )
    assert long_id in printed.stdout and f"wrote {out}\n" in printed.stdout, printed.stdout


_LOADED = """
import sys
from jbcompile.cli import main
sys.argv = ["jbcompile", *sys.argv[1:]]
try:
    main()
except SystemExit as end:
    code = end.code
print(code, sorted({m for m in sys.modules if m.startswith(("jbcompile.cli.", "jbcompile.evaluate"))}))
"""


def _loaded(*args: str) -> tuple[object, list[str]]:
    """A command's exit code and the CLI and evaluator modules it imported, in a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", _LOADED, *args], capture_output=True, text=True, encoding="utf-8", check=True
    )
    code, modules = done.stdout.strip().splitlines()[-1].split(" ", 1)
    return code, eval(modules)


def test_a_command_imports_its_own_module_and_not_the_evaluator(mini_sources: Path, tmp_path: Path) -> None:
    code, modules = _loaded("build", "--sources", str(mini_sources), "--out", str(tmp_path / "out"))
    assert code == "0"
    assert modules == ["jbcompile.cli.app", "jbcompile.cli.build"]
    code, modules = _loaded("check", "--sources", str(mini_sources))
    assert modules == ["jbcompile.cli.app", "jbcompile.cli.check"]
    # a command whose module has another name (score is in eval.py) is still found
    code, modules = _loaded("score", "--help")
    assert code == "0" and "jbcompile.cli.eval" in modules


_LISTED = """
import sys, typer
from jbcompile.cli import app
group = typer.main.get_command(app)
context = group.make_context("jbcompile", [], resilient_parsing=True)
for name in sys.argv[1:]:
    assert group.get_command(context, name) is not None, name
print(group.list_commands(context))
"""


def test_help_lists_every_command_in_one_order_whichever_was_loaded_first() -> None:
    def listed(*first: str) -> list[str]:
        done = subprocess.run(
            [sys.executable, "-c", _LISTED, *first], capture_output=True, text=True, check=True
        )
        return eval(done.stdout)

    commands = listed()
    assert commands[:3] == ["audit", "build", "stats"] and commands[-2:] == ["export", "import"]
    assert {"eval", "score", "compare", "publish", "verify", "translate", "init", "check"} <= set(commands)
    for first in (["translate"], ["score", "build"], ["import", "eval"]):
        assert listed(*first) == commands, first
    typo = run("biuld")
    assert typo.returncode == 2 and "Did you mean 'build'?" in typo.stderr


def test_compare_without_runs_is_its_documented_ev214_not_typers_usage_error(tmp_path: Path) -> None:
    out = tmp_path / "c1"
    result = run("compare", "--out", str(out))
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("EV214 no runs to compare — pass two or more run folders"), result.stderr
    assert "Missing" not in result.stderr and "╭" not in result.stderr
    assert result.stderr.rstrip().endswith("1 error(s); nothing was written.") and not out.exists()


def _required_parameters() -> list[tuple[str, list[str]]]:
    """Every command (its words) with the names of its required arguments and options."""
    import typer
    from jbcompile.cli import app

    root = typer.main.get_command(app)
    context = root.make_context("jbcompile", [], resilient_parsing=True)
    found = []

    def walk(command: object, words: list[str]) -> None:
        if hasattr(command, "list_commands"):
            for name in command.list_commands(context):
                walk(command.get_command(context, name), [*words, name])
        elif any(param.required for param in command.params):
            found.append((" ".join(words), [param.name for param in command.params if param.required]))

    walk(root, [])
    return found


def test_every_required_parameter_left_out_is_a_coded_diagnostic() -> None:
    """Whatever command requires an argument or option, leaving it out is CL012 (or the command's own
    code) naming it, with a hint, exit 2: never typer's boxed "Missing argument"."""
    from jbcompile.cli import app
    from typer.testing import CliRunner

    required = _required_parameters()
    assert {"compare", "eval", "score", "diff", "verify", "export lm-eval", "import bbq-jsonl"} <= {
        words for words, _ in required
    }
    for words, names in required:
        result = CliRunner().invoke(app, words.split())
        said = result.output
        assert result.exit_code == 2, (words, said)
        assert "Missing" not in said and "╭" not in said, (words, said)
        code = "EV214" if words == "compare" else "CL012"
        assert said.startswith(f"{code} "), (words, said)
        if code == "CL012":
            assert f"`jbcompile {words}` needs " in said and names[0].upper() in said, (words, said)
            assert f"`jbcompile {words} --help` lists what it takes" in " ".join(said.split()), said


def test_a_missing_option_is_named_with_what_it_is() -> None:
    result = run("eval", "--model", "x")
    assert result.returncode == 2
    assert result.stderr.startswith(
        "CL012 `jbcompile eval` needs --dataset DATASET, which was not given — "
        "pass --dataset DATASET: A build folder or a Hub dataset id;"
    ), result.stderr
