"""Fuzzing every input format the tool reads (issue 23): BBQ/JUBAKU JSON Lines, SOBACO JSON, BBQ template
CSVs, predictions, model replies and YAML traps in the sources. Whatever the bytes, the outcome is a
coded diagnostic or a result that accounts for every input line — never a traceback, never a line read
that an independent parser would refuse (a key given twice, bytes that are not UTF-8), never one dropped
without a word."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jbcompile.codes import all_codes
from jbcompile.diagnostics import DiagnosticError
from jbcompile.importers.report import ImportReport

from tests.conftest import FIXTURES
from tests.importers.conftest import EN_SPECS, generate_rows, write_template_csvs
from tests.importers.test_jubaku import release_rows
from tests.importers.test_sobaco import problems

FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
DECLARED = set(all_codes())

# Edits that break a line the way real files break: cut, garbage, a key given twice, a BOM, bytes that
# are not UTF-8, NUL, deep nesting, a huge number, a line that is a list, an empty line.
TRAPS = [
    b"\xff",
    b"\x00",
    b"\xef\xbb\xbf",
    b'"',
    b"{",
    b"}",
    b",",
    b'"example_id": 1, "example_id": 2, ',
    b'"question": "a", ',
    b"[" * 3000,
    b"1e999999",
    b"\\ud800",
    b"\xe2\x80\xae",
    b"\n",
    b"\n[1, 2]\n",
    b"\n\n",
    DUPLICATE := b"<an object's first member again>",
]
edits = st.lists(
    st.tuples(st.integers(0, 10_000), st.integers(0, 8), st.sampled_from([*TRAPS, *[DUPLICATE] * 5])),
    min_size=1,
    max_size=4,
)


def _with_a_key_twice(obj: dict) -> bytes:
    """``obj`` written with its first member given once more (the same key and value)."""
    members = [
        f"{json.dumps(k)}: {json.dumps(v)}"
        for k, v in obj.items()  # escaped: a lone surrogate stays one
    ]
    return ("{" + ", ".join([*members, members[0]]) + "}").encode("utf-8")


def _duplicate(data: bytes, which: int) -> bytes:
    """One object of a JSON Lines file, or one element of a JSON list, with a key given twice."""
    try:
        document = json.loads(data)
    except (ValueError, RecursionError):  # as the oracle reads it: too deeply nested is not JSON here
        lines = data.split(b"\n")
        numbers = [n for n, line in enumerate(lines) if _strict_object(line)]
        if numbers:
            n = numbers[which % len(numbers)]
            lines[n] = _with_a_key_twice(json.loads(lines[n]))
        return b"\n".join(lines)
    if isinstance(document, list) and document and all(isinstance(x, dict) and x for x in document):
        items = [json.dumps(x).encode("utf-8") for x in document]
        items[which % len(items)] = _with_a_key_twice(document[which % len(items)])
        return b"[" + b",\n".join(items) + b"]"
    return data


def _mutate(data: bytes, changes: list[tuple[int, int, bytes]]) -> bytes:
    for where, cut, insert in changes:
        if insert == DUPLICATE:
            data = _duplicate(data, where)
            continue
        at = where * len(data) // 10_000
        data = data[:at] + insert + data[at + cut :]
    return data


def _strict_object(line: bytes) -> dict | None:
    """The oracle: the line as an object by an independent strict reading (UTF-8, JSON, keys once)."""

    def unique(pairs: list) -> dict:
        keys = [key for key, _ in pairs]
        if len(set(keys)) != len(keys):
            raise ValueError("a key twice")
        return dict(pairs)

    try:
        value = json.loads(line.decode("utf-8").removeprefix("\ufeff"), object_pairs_hook=unique)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _coded(error: DiagnosticError) -> None:
    assert error.diagnostics
    _explained(error.diagnostics)


def _explained(diagnostics) -> None:
    """Declared codes, and every error says what to do about it."""
    for problem in diagnostics:
        assert problem.code in DECLARED, problem
        assert problem.message
        assert problem.severity != "error" or problem.hint, f"no hint: {problem.code} {problem.message}"


# ---- BBQ and JUBAKU JSON Lines -------------------------------------------------------------------


def _jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode("utf-8")


BBQ_RELEASE = _jsonl(generate_rows(EN_SPECS, "en")[:24])
JUBAKU_RELEASE = _jsonl(release_rows()[:16])


def _release_accounts_for_every_line(data: bytes, design: str) -> None:
    if design == "bbq":
        from jbcompile.designs.bbq.importers.jsonl import import_bbq_jsonl as run
        from jbcompile.designs.bbq.importers.rows import read_rows
    else:
        from jbcompile.designs.jubaku.importer import import_jubaku_jsonl as run
        from jbcompile.designs.jubaku.importer import read_rows
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rows.jsonl"
        path.write_bytes(data)
        report = ImportReport()
        rows = read_rows([path], report)
        lines = data.split(b"\n")
        nonblank = {
            n for n, line in enumerate(lines, 1) if line.strip() and not (n == len(lines) and not line)
        }
        read = {row.line for row in rows}
        reported = {d.line for d in report.diagnostics}
        assert read | reported == nonblank and not read & reported  # every line read or reported, once
        for number in read:
            assert _strict_object(lines[number - 1]) is not None, (
                f"line {number} read, but it is not one object"
            )
        for problem in report.diagnostics:
            assert problem.line
        _explained(report.diagnostics)
        try:
            run([path])
        except DiagnosticError as error:
            _coded(error)


@FAST
@given(edits)
def test_bbq_jsonl(changes) -> None:
    _release_accounts_for_every_line(_mutate(BBQ_RELEASE, changes), "bbq")


@FAST
@given(edits)
def test_jubaku_jsonl(changes) -> None:
    _release_accounts_for_every_line(_mutate(JUBAKU_RELEASE, changes), "jubaku")


# ---- SOBACO's JSON -------------------------------------------------------------------------------

SOBACO_RELEASE = json.dumps(problems()[:8], ensure_ascii=False, indent=1).encode("utf-8")


@FAST
@given(edits)
def test_sobaco_json(changes) -> None:
    from jbcompile.designs.sobaco.importer import import_sobaco_json

    data = _mutate(SOBACO_RELEASE, changes)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "ja_templates.json"
        path.write_bytes(data)
        try:
            _, report, _ = import_sobaco_json(path)
        except DiagnosticError as error:
            _coded(error)
            return
    assert _strict_document(data) is not None, "a document an independent reader refuses was imported"
    _explained(report.diagnostics)


def _strict_document(data: bytes) -> Any:
    try:
        return _strict_object(b'{"x": ' + data.removeprefix(b"\xef\xbb\xbf") + b"}")
    except ValueError:
        return None


# ---- BBQ's template CSVs -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def csv_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_template_csvs(tmp_path_factory.mktemp("csv"), EN_SPECS)


@FAST
@given(changes=edits, vocabulary=st.booleans())
def test_bbq_template_csv(csv_folder: Path, changes, vocabulary) -> None:
    from jbcompile.designs.bbq.importers.templates import import_bbq_templates

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "templates"
        shutil.copytree(csv_folder, root)
        csv_name = next(p.name for p in root.glob("new_templates - *.csv"))
        target = root / ("vocabulary.csv" if vocabulary else csv_name)
        target.write_bytes(_mutate(target.read_bytes(), changes))
        try:
            _, report = import_bbq_templates(root, None, [])
        except DiagnosticError as error:
            _coded(error)
            return
        _explained(report.diagnostics)


# ---- model replies -------------------------------------------------------------------------------

replies = st.one_of(
    st.text(max_size=60),
    st.lists(
        st.sampled_from(
            [
                "A",
                "B",
                "Ｂ",
                "**A**",
                "回答：",
                "答えは",
                "ではなく",
                "<think>",
                "</think>",
                "\n",
                "どちらでもない",
                "1",
                "2",
                "3",
                "\u202e",
                "\u200b",
                "\0",
                "応答",
                " ",
                "。",
                "option",
            ]
        ),
        max_size=12,
    ).map("".join),
)


@settings(max_examples=400, deadline=None)
@given(replies, st.sampled_from([("A", "B"), ("1", "2", "3")]))
def test_a_reply_is_an_option_or_none(text: str, labels: tuple[str, ...]) -> None:
    from jbcompile.evaluate.parsing import read_reply

    options = [f"選択肢{i}" for i in range(len(labels))]
    chosen = read_reply(text, labels, options)
    assert chosen is None or (type(chosen) is int and 0 <= chosen < len(labels))
    assert read_reply(text, labels, options) == chosen  # the same reply, the same reading


# ---- YAML traps in the sources -------------------------------------------------------------------

YAML_TRAPS = [
    ".nan",
    ".inf",
    "-.inf",
    "1e400",
    "123456789012345678901234567890",
    "0x1F",
    "0o17",
    "2026-01-01",
    "2026-01-01T00:00:00Z",
    "!!binary aGVsbG8=",
    "!!python/object:os.system {}",
    "!!set {a, b}",
    "!!omap [a: 1]",
    "&a [1, 2]",
    "*undefined",
    "{<<: {x: 1}, y: 2}",
    "yes",
    "~",
    "''",
    '"\\u202e\\0"',
    "[[[[[[[[[[]]]]]]]]]]",
    "? [a]\n  : b",
]
FIELDS = [
    "id",
    "category",
    "stereotype",
    "ambiguous_context",
    "words",
    "persons",
    "questions",
    "symmetric_mention",
]


@FAST
@given(st.sampled_from(FIELDS), st.sampled_from(YAML_TRAPS))
def test_yaml_traps_give_a_diagnostic_or_a_clean_project(tmp_path_factory, field: str, trap: str) -> None:
    from jbcompile.build import compile_project
    from jbcompile.project import load_project

    root = tmp_path_factory.mktemp("traps") / "sources"
    shutil.copytree(FIXTURES / "mini_sources", root)
    path = root / "templates/Age/age-work.yaml"
    lines = [line for line in path.read_text("utf-8").splitlines() if not line.startswith(f"{field}:")]
    path.write_text("\n".join(lines) + f"\n{field}: {trap}\n", "utf-8")
    try:
        compiled = compile_project(load_project(root))  # with the lint rules, as `jbcompile build`
    except DiagnosticError as error:
        _coded(error)
        assert all(d.path for d in error.diagnostics)
        return
    for config in compiled.configs.values():
        for row in config.rows:
            for value in row.values():
                assert not isinstance(value, float), row  # no NaN or infinity made it into a row
                if isinstance(value, str):
                    assert "\u202e" not in value and "\0" not in value and "{" not in value, row
