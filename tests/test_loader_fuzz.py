"""Property tests: whatever bytes a source file holds, the tool answers with diagnostics, never a crash."""

from __future__ import annotations

import shutil

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jbcompile.diagnostics import DiagnosticError
from jbcompile.loader import parse_yaml
from jbcompile.project import load_project

from tests.conftest import FIXTURES

yaml_ish = st.text(alphabet=st.sampled_from(list("ab:-[]{}\"'#&*!|>%@`\n\t ,?0123456789年「」")), max_size=80)


@settings(max_examples=300, deadline=None)
@given(yaml_ish)
def test_parse_yaml_never_crashes(text: str) -> None:
    try:
        doc = parse_yaml(text, "x.yaml")
    except DiagnosticError as error:
        assert error.diagnostics
        assert all(d.code.startswith("Y") and d.path == "x.yaml" for d in error.diagnostics)
    else:
        assert doc.path == "x.yaml"


values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=8,
)

FIELDS = [
    "id",
    "category",
    "origin",
    "persons",
    "words",
    "ambiguous_context",
    "disambiguating_context",
    "questions",
    "stereotyped_groups",
    "kind",
    "rationale",
]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(FIELDS), values)
def test_any_field_value_gives_a_diagnostic_or_a_project(tmp_path_factory, field: str, value) -> None:
    import yaml

    root = tmp_path_factory.mktemp("fuzz") / "sources"
    shutil.copytree(FIXTURES / "mini_sources", root)
    path = root / "templates/Age/age-work.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data[field] = value
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    try:
        project = load_project(root)
    except DiagnosticError as error:
        assert error.diagnostics
        assert all(d.path and d.code and d.message for d in error.diagnostics)
    else:
        assert len(project.templates) == 3


# -- the whole source loader and compiler over mutated files --------------------------------------------

_MUTATION_ALPHABET = list("ab:-[]{}\"'#&*!|>%@`\n\t ,?0123456789年「」") + ["{{", "}}", "{{NAME1}}", "\xff"]


@st.composite
def _mutations(draw: st.DrawFn) -> list[tuple[int, int, str]]:
    """Up to 4 edits (position as a fraction of the file, characters to delete, text to insert)."""
    return draw(
        st.lists(
            st.tuples(
                st.integers(0, 10_000),
                st.integers(0, 6),
                st.lists(st.sampled_from(_MUTATION_ALPHABET), max_size=4).map("".join),
            ),
            min_size=1,
            max_size=4,
        )
    )


def _mutate(data: bytes, edits: list[tuple[int, int, str]]) -> bytes:
    for where, cut, insert in edits:
        at = where * len(data) // 10_000
        payload = insert.encode("utf-8", "surrogateescape").replace(b"\xc3\xbf", b"\xff")
        data = data[:at] + payload + data[at + cut :]
    return data


def _texts(rows: list[dict]) -> list[str]:
    return [v for row in rows for k, v in row.items() if isinstance(v, str) and k not in ("example_id",)]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["templates/Age/age-work.yaml", "vocab/Age.yaml", "dataset.yaml"]), _mutations())
def test_mutated_sources_give_a_positioned_diagnostic_or_a_correct_build(
    tmp_path_factory, name, edits
) -> None:
    """No traceback; either exit 2 with diagnostics that name file and line, or a build without wrong rows."""
    from jbcompile.build import compile_project

    root = tmp_path_factory.mktemp("fuzz") / "sources"
    shutil.copytree(FIXTURES / "mini_sources", root)
    path = root / name
    path.write_bytes(_mutate(path.read_bytes(), edits))
    try:
        compiled = compile_project(load_project(root), checks=False)
    except DiagnosticError as error:
        errors = [d for d in error.diagnostics if d.severity == "error"]
        assert errors
        for d in errors:
            assert d.path and d.code and d.message, d
            assert d.line is not None, d  # every problem in a file names its line
        return
    assert len(compiled.project.templates) == 3
    for config in compiled.configs.values():
        assert config.rows
        for text in _texts(config.rows):
            assert "{" not in text and "}" not in text, text  # no slot left unfilled or half-written
