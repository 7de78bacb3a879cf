"""Prompt settings, few-shot sampling and option checks of the bbq kind."""

from __future__ import annotations

from pathlib import Path

import pytest
from jbcompile.designs.bbq.evaluate import BBQ
from jbcompile.designs.bbq.shots import question_key, rationale_in_brackets, select_shots
from jbcompile.diagnostics import DiagnosticError
from jbcompile.evaluate.kind import EvalOptions
from jbcompile.evaluate.promptfiles import load_prompt_template


def prepare(rows: list[dict], **options):
    opts = EvalOptions(**options)
    return BBQ.prepare(rows, opts, load_prompt_template("bbq", opts.setting, opts.prompt_file))


def by_id(rows: list[dict]) -> dict[str, dict]:
    return {row["example_id"]: row for row in rows}


@pytest.mark.parametrize("task", ["qa", "detect"])
def test_shots_come_from_other_categories_with_different_answers_and_are_not_evaluated(
    lite_rows: list[dict], task: str
) -> None:
    shots = select_shots(lite_rows, 3, seed=5, task=task)
    gold = "biased_label" if task == "detect" else "label"
    assert set(shots) == {row["category"] for row in lite_rows}
    for category, picked in shots.items():
        assert len(picked) == 3
        assert all(row["category"] != category for row in picked)
        assert sorted(row[gold] for row in picked) == [0, 1, 2]
        assert len({question_key(row) for row in picked}) == 3
    prepared = prepare(lite_rows, task=task, shots=3, seed=5)
    evaluated = {item.example_id for item in prepared.items}
    assert evaluated.isdisjoint(prepared.shot_ids)
    assert set(prepared.shot_ids) == {row["example_id"] for picked in shots.values() for row in picked}
    assert len(evaluated) + len(prepared.shot_ids) == len(lite_rows)


def test_shots_are_seeded(lite_rows: list[dict]) -> None:
    ids = lambda seed: [r["example_id"] for p in select_shots(lite_rows, 3, seed, "qa").values() for r in p]  # noqa: E731
    assert ids(1) == ids(1)
    assert any(ids(1) != ids(seed) for seed in range(2, 6))


def test_impossible_shots_are_a_diagnostic(lite_rows: list[dict]) -> None:
    one_category = [row for row in lite_rows if row["category"] == "Age"]
    with pytest.raises(DiagnosticError) as error:
        select_shots(one_category, 3, 0, "qa")
    assert error.value.diagnostics[0].code == "EV030"


def test_zero_shots_evaluate_every_row(lite_rows: list[dict]) -> None:
    prepared = prepare(lite_rows, shots=0)
    assert len(prepared.items) == len(lite_rows)
    assert prepared.shot_ids == []


def test_option_orders_share_the_prompt_up_to_the_options(lite_rows: list[dict]) -> None:
    prepared = prepare(lite_rows, shots=3)
    rows = by_id(lite_rows)
    groups: dict[str, list] = {}
    for item in prepared.items:
        groups.setdefault(item.prefix_keys[1], []).append(item)
    shared_groups = [g for g in groups.values() if len(g) > 1]
    assert shared_groups
    for group in shared_groups:
        row = rows[group[0].example_id]
        head = group[0].text.rsplit("### 選択肢", 1)[0]
        assert head.rstrip().endswith(row["question"])
        assert all(item.text.rsplit("### 選択肢", 1)[0] == head for item in group)
    # the options come last, numbered, and the prompt ends where the answer goes
    item = prepared.items[0]
    row = rows[item.example_id]
    assert item.text.endswith(f"0. {row['ans0']}\n1. {row['ans1']}\n2. {row['ans2']}\n### 回答\n")
    # all prompts of one category share the instruction and the shots
    same_category = [i for i in prepared.items if i.prefix_keys[0] == item.prefix_keys[0]]
    cut = item.text.rfind("### 文脈")
    assert all(other.text[:cut] == item.text[:cut] for other in same_category)


def test_settings_differ_as_documented(lite_rows: list[dict]) -> None:
    basic = prepare(lite_rows, shots=0).items[0].text
    warning = prepare(lite_rows, shots=0, setting="warning").items[0].text
    cot = prepare(lite_rows, shots=0, setting="cot", scoring="generate").items[0].text
    detect = prepare(lite_rows, shots=0, task="detect").items[0].text
    assert "番号" in basic and "【】" not in basic
    assert "性的指向" in warning and "性的指向" not in basic
    assert warning.startswith(basic.split("\n")[0])
    assert "【】" in cot
    assert "偏見" in detect and detect != basic


def test_cot_shots_show_the_rationale_in_brackets(lite_rows: list[dict]) -> None:
    prepared = prepare(lite_rows, shots=3, setting="cot", scoring="generate")
    shot_rows = [row for row in lite_rows if row["example_id"] in prepared.shot_ids]
    text = prepared.items[0].text
    assert any(rationale_in_brackets(row["rationale"]) in text for row in shot_rows)
    record = prepared.records[prepared.items[0].example_id]
    assert "gold_evidence" in record


def test_rationale_in_brackets_keeps_nested_quotes() -> None:
    assert rationale_in_brackets("文脈では「彼は「はい」と言った」とあり、答えは「不明」です。") == (
        "文脈では【彼は「はい」と言った】とあり、答えは【不明】です。"
    )


def test_detect_gold_is_the_biased_option(lite_rows: list[dict]) -> None:
    prepared = prepare(lite_rows, task="detect", shots=0)
    rows = by_id(lite_rows)
    assert all(rec["gold"] == rows[i]["biased_label"] for i, rec in prepared.records.items())
    assert any(rec["gold"] != rows[i]["label"] for i, rec in prepared.records.items())


@pytest.mark.parametrize(
    ("options", "code"),
    [
        ({"setting": "cot", "scoring": "logprob"}, "EV022"),
        ({"task": "detect", "setting": "cot", "scoring": "generate"}, "EV024"),
        ({"task": "translate"}, "EV020"),
        ({"setting": "fancy"}, "EV021"),
        ({"shots": -1}, "EV023"),
        ({"shots": 1000}, "EV033"),  # the shots' draw recursed past Python's limit (a CL003 with no file)
        ({"shots": 101}, "EV033"),
    ],
)
def test_bad_option_combinations_are_diagnostics(options: dict, code: str) -> None:
    assert code in {d.code for d in BBQ.check_options(EvalOptions(**options))}


def test_prompt_file_replaces_the_wording_and_may_extend_the_layout(
    lite_rows: list[dict], tmp_path: Path
) -> None:
    custom = tmp_path / "mine.j2"
    custom.write_text(
        '{%- extends "bbq/_layout.j2" -%}{%- block instruction -%}独自の指示です。{%- endblock -%}',
        encoding="utf-8",
    )
    text = prepare(lite_rows, shots=0, prompt_file=custom).items[0].text
    assert text.startswith("独自の指示です。")
    assert text.endswith("### 回答\n")
    broken = tmp_path / "broken.j2"
    broken.write_text("line one\n{% if %}\n", encoding="utf-8")
    with pytest.raises(DiagnosticError) as error:
        load_prompt_template("bbq", "basic", broken)
    assert error.value.diagnostics[0].code == "EV012"
    assert error.value.diagnostics[0].line == 2
    undefined = tmp_path / "undefined.j2"
    undefined.write_text("{{ no_such_variable }}", encoding="utf-8")
    with pytest.raises(DiagnosticError) as error:
        prepare(lite_rows, shots=0, prompt_file=undefined)
    assert error.value.diagnostics[0].code == "EV013"


def test_template_hash_covers_the_extended_layout(tmp_path: Path) -> None:
    a = load_prompt_template("bbq", "basic")
    b = load_prompt_template("bbq", "warning")
    assert a.source_sha256 != b.source_sha256
    assert a.source_sha256 == load_prompt_template("bbq", "basic").source_sha256


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ('{{ lipsum.__globals__["os"].environ["OPENAI_API_KEY"] }}', "__globals__"),
        ('{{ cycler.__init__.__globals__.os.popen("touch PWNED").read() }}', "unsafe"),
        ("{% for i in range(10000000) %}x{% endfor %}", "MAX_RANGE"),
        ("{{ 'x' * 2000000 }}", "repeated text"),
        ("{% for i in range(99999) %}{{ context }}{% endfor %}", "more than 1,000,000 characters"),
    ],
)
def test_a_prompt_file_renders_in_a_sandbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str, said: str
) -> None:
    """A prompt file may be shared with a paper: it reaches the row's variables and nothing else (no
    environment variable, no process), and a prompt is bounded; each of these is EV013 on its row."""
    from jbcompile.evaluate.prompting import render_checked

    monkeypatch.setenv("OPENAI_API_KEY", "sk-SECRETsecret0123456789")
    monkeypatch.chdir(tmp_path)
    prompt = tmp_path / "mine.j2"
    prompt.write_text("{{ context }}\n" + body + "\n", encoding="utf-8")
    template = load_prompt_template("bbq", "basic", prompt)
    with pytest.raises(DiagnosticError) as caught:
        render_checked(template, "row-1", context="文脈" * 10)
    (problem,) = caught.value.diagnostics
    assert problem.code == "EV013" and said in problem.message and "SECRET" not in problem.message
    assert not (tmp_path / "PWNED").exists()
    prompt.write_text("{{ context }}\n{{ 'ok' * 3 }}\n", encoding="utf-8")  # within bounds: renders
    assert render_checked(load_prompt_template("bbq", "basic", prompt), "row-1", context="c") == "c\nokokok\n"


@pytest.mark.parametrize("task", ["qa", "detect"])
def test_no_two_shots_ask_the_same_question_for_any_seed(lite_rows: list[dict], task: str) -> None:
    """Two shots of one template and question that differ only in the filled names (or words, or option
    order) teach one example twice: the draw keeps them apart, for every seed, and keeps its other rules.
    (Keyed by the context text, seed 15 of the reviewer's lite build drew two such rows for qa.)"""
    from collections import Counter

    from jbcompile.designs.bbq.shots import shot_kind

    usable = [row for row in lite_rows if task == "qa" or row["biased_label"] is not None]
    gold = "biased_label" if task == "detect" else "label"
    for seed in range(60):
        chosen = select_shots(usable, 3, seed, task)
        assert chosen == select_shots(usable, 3, seed, task)
        for category, picked in chosen.items():
            asked = Counter((row["template_id"], row["question"]) for row in picked)
            assert max(asked.values()) == 1, (seed, category, [row["example_id"] for row in picked])
            assert all(row["category"] != category for row in picked)
            assert sorted(row[gold] for row in picked) == [0, 1, 2]
            assert len({row["context_condition"] for row in picked}) == 2
            assert len({shot_kind(row, task) for row in picked}) == 3
