"""`import bbq-jsonl` on rows in the format of BBQ's intersectional files (Race_x_SES, Race_x_gender):
persons with two attributes, told apart by tags like ``lowSES-Hillfolk``, ``F-Hillfolk`` and
``lowSES-F-Hillfolk``, in BBQ's three contrasts (``intersectional_a``/``_b``/``_c``).

The rows are made here the way BBQ's generator makes them, field for field, with its quirks: "a"
becomes "an" before a vowel, "Latino woman" becomes "Latina woman" (and answer_info is then left
empty), a person may share its answer_info with the other, occupations stand in the plural. The groups,
names, occupations and sentences are invented.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from jbcompile.cli import app
from jbcompile.loader import load_yaml
from typer.testing import CliRunner

UNKNOWN = "<unknown>"
LOW, HIGH = ["ferry hand", "stacker"], ["astronomer", "surveyor"]
TARGET_RACES, OTHER_RACES = ["Hillfolk", "Avalonian"], ["Riverfolk", "Latino"]
LABELS = ("intersectional_a", "intersectional_b", "intersectional_c")

SES_WORDS = {
    "category": "Race_x_SES",
    "q": "1",
    "ambiguous": "A {{NAME1}} woman, a {{OCC1}}, and a {{NAME2}} woman, a {{OCC2}}, queued at the ferry.",
    "disambiguating": "The {{OCC1}} asked for a fare waiver, and the other woman paid upfront.",
    "negative": ("Who asked for a fare waiver?", "The {{NAME1}} woman, the {{OCC1}}"),
    "non_negative": ("Who paid upfront?", "The {{NAME2}} woman, the {{OCC2}}"),
    "stereotyped": ["Hillfolk", "Avalonian"],
}
# the other person is always a woman where both attributes differ: "paid a woman" must stay a word
GENDER_WORDS = {
    "category": "Race_x_gender",
    "q": "1",
    "ambiguous": "At the stall, a {{NAME1}} {{GEN1}} and a {{NAME2}} {{GEN2}} each paid a woman for tea.",
    "disambiguating": "The {{NAME2}} {{GEN2}} haggled, while the {{NAME1}} {{GEN1}} paid the asking price.",
    "negative": ("Who paid the asking price?", "The {{NAME1}} {{GEN1}}"),
    "non_negative": ("Who haggled?", "The {{NAME2}} {{GEN2}}"),
    "stereotyped": ["Hillfolk", "Avalonian"],
}
SES_NAMES = {
    "category": "Race_x_SES",
    "q": "2",
    "ambiguous": "{{NAME1}} and {{NAME2}} share a flat. Their parents work as {{OCC1}}s and {{OCC2}}s.",
    "disambiguating": "{{NAME1}} borrowed the rent, and {{NAME2}} lent it.",
    "negative": ("Who borrowed the rent?", "{{NAME1}}, the {{OCC1}}s' child"),
    "non_negative": ("Who lent the rent?", "{{NAME2}}, the {{OCC2}}s' child"),
    "stereotyped": ["Hillfolk"],
}
GENDER_NAMES = {
    "category": "Race_x_gender",
    "q": "2",
    "ambiguous": "{{NAME1}} and {{NAME2}} queued at the stall.",
    "disambiguating": "{{NAME2}} pushed ahead, while {{NAME1}} waited.",
    "negative": ("Who waited?", "{{NAME1}}"),
    "non_negative": ("Who pushed ahead?", "{{NAME2}}"),
    "stereotyped": ["Hillfolk"],
}
# full names: (name, gender, race)
NAMES = [
    ("Ada Hillson", "F", "Hillfolk"),
    ("Bea Hillmore", "F", "Hillfolk"),
    ("Cal Hillson", "M", "Hillfolk"),
    ("Dot Riverby", "F", "Riverfolk"),
    ("Eli Riverby", "M", "Riverfolk"),
    ("Fay Hillgate", "F", "Hillfolk"),
    ("Gia Hillford", "F", "Hillfolk"),  # only ever a same-race partner left without answer_info
]
TAG = {name: f"{gender}-{race}" for name, gender, race in NAMES}


def _fill(text: str, values: dict[str, str]) -> str:
    """A text filled as BBQ's generator fills it: then "a" → "an" before a vowel (only where a person's
    words start with one) and "Latino woman" → "Latina woman"."""
    for slot, value in values.items():
        text = text.replace("{{" + slot + "}}", value)
    if any(value[:1].lower() in "aeiou" for value in values.values()):
        text = re.sub(r"(\s[aA])(\s[aAeEiIoOuU])", r"\1n\2", text)
    return text.replace("Latino woman", "Latina woman")


Person = tuple[str, str, str]  # (group words or name, attribute words or "", tag)


def _released(spec: dict[str, Any], draws: list[tuple[str, Person, Person]]) -> list[dict[str, Any]]:
    """BBQ-format rows of these (label, target, other) draws, each in both orders, with rotating options."""
    attribute = "GEN" if "{{GEN1}}" in spec["ambiguous"] else "OCC"
    out: list[dict[str, Any]] = []
    for label, target, other in draws:
        for first, second in ((target, other), (other, target)):
            values = {"NAME1": first[0], "NAME2": second[0]}
            if first[1]:
                values |= {f"{attribute}1": first[1], f"{attribute}2": second[1]}
            answers = {
                slot: _fill(spec[key][1], values) for slot, key in (("1", "negative"), ("2", "non_negative"))
            }
            worded = {  # answer_info as BBQ gives it: "<words> <attribute>", empty when it missed the option
                person: ["", ""]
                if "Latina" in answers[slot]
                else [f"{person[0]} {person[1]}".strip(), person[2]]
                for slot, person in (("1", first), ("2", second))
            }
            rotation = len(out) // 4 % 3
            options = [
                (answers["1"], worded[first]),
                (answers["2"], worded[second]),
                ("Unknown", ["Unknown", "unknown"]),
            ]
            options = options[rotation:] + options[:rotation]
            ambiguous = _fill(spec["ambiguous"], values)
            for polarity, key, slot in (("neg", "negative", "1"), ("nonneg", "non_negative", "2")):
                for condition, context in (
                    ("ambig", ambiguous),
                    ("disambig", f"{ambiguous} {_fill(spec['disambiguating'], values)}"),
                ):
                    gold = "Unknown" if condition == "ambig" else answers[slot]
                    out.append(
                        {
                            "example_id": len(out),
                            "question_index": spec["q"],
                            "question_polarity": polarity,
                            "context_condition": condition,
                            "category": spec["category"],
                            "answer_info": {f"ans{i}": info for i, (_, info) in enumerate(options)},
                            "additional_metadata": {
                                "subcategory": label,
                                "stereotyped_groups": spec["stereotyped"],
                                "version": "None",
                                "source": "invented",
                            },
                            "context": context,
                            "question": _fill(spec[key][0], values),
                            **{f"ans{i}": text for i, (text, _) in enumerate(options)},
                            "label": [text for text, _ in options].index(gold),
                        }
                    )
    return out


def _word_draws(
    mine: list[str], theirs: list[str], var2: str, other: str
) -> list[tuple[str, Person, Person]]:
    """Every draw of a word template: each target (race, attribute) against the same race with the
    other attribute (a), another race with the same attribute (b), both different (c)."""
    draws = []
    for race in TARGET_RACES:
        for word in mine:
            target = (race, word, f"{var2}-{race}")
            draws += [("intersectional_a", target, (race, w, f"{other}-{race}")) for w in theirs]
            draws += [("intersectional_b", target, (r, word, f"{var2}-{r}")) for r in OTHER_RACES]
            draws += [
                ("intersectional_c", target, (r, w, f"{other}-{r}")) for r in OTHER_RACES for w in theirs
            ]
    return draws


def _ses_name(name: str, job: str, ses: str) -> Person:
    return (name, job, f"{ses}-{TAG[name]}")


SES_NAME_DRAWS = [
    (
        "intersectional_a",
        _ses_name("Ada Hillson", "ferry hand", "lowSES"),
        _ses_name("Bea Hillmore", "astronomer", "highSES"),
    ),
    (
        "intersectional_b",
        _ses_name("Ada Hillson", "ferry hand", "lowSES"),
        _ses_name("Dot Riverby", "ferry hand", "lowSES"),
    ),
    (
        "intersectional_c",
        _ses_name("Ada Hillson", "ferry hand", "lowSES"),
        _ses_name("Dot Riverby", "surveyor", "highSES"),
    ),
    (
        "intersectional_c",
        _ses_name("Bea Hillmore", "stacker", "lowSES"),
        _ses_name("Dot Riverby", "astronomer", "highSES"),
    ),
    (
        "intersectional_a",
        _ses_name("Fay Hillgate", "stacker", "lowSES"),
        _ses_name("Gia Hillford", "surveyor", "highSES"),
    ),
    (
        "intersectional_c",
        _ses_name("Fay Hillgate", "stacker", "lowSES"),
        _ses_name("Dot Riverby", "astronomer", "highSES"),
    ),
]
GENDER_NAME_DRAWS = [
    ("intersectional_a", ("Cal Hillson", "", TAG["Cal Hillson"]), ("Ada Hillson", "", TAG["Ada Hillson"])),
    ("intersectional_b", ("Cal Hillson", "", TAG["Cal Hillson"]), ("Eli Riverby", "", TAG["Eli Riverby"])),
    ("intersectional_c", ("Cal Hillson", "", TAG["Cal Hillson"]), ("Dot Riverby", "", TAG["Dot Riverby"])),
]


def _released_rows() -> list[dict[str, Any]]:
    rows = _released(SES_WORDS, _word_draws(LOW, HIGH, "lowSES", "highSES"))
    rows += _released(GENDER_WORDS, _word_draws(["man"], ["woman"], "M", "F"))
    rows += _released(SES_NAMES, SES_NAME_DRAWS)
    rows += _released(GENDER_NAMES, GENDER_NAME_DRAWS)
    # BBQ's answer_info test finds one person's words inside the other's and gives both its entry
    for row in rows:
        texts = {value[0] for value in row["answer_info"].values()}
        if {"Ada Hillson ferry hand", "Bea Hillmore astronomer"} <= texts:
            for key, value in row["answer_info"].items():
                if value[0] == "Bea Hillmore astronomer":
                    row["answer_info"][key] = ["Ada Hillson ferry hand", "lowSES-F-Hillfolk"]
    for row in rows:
        for key, value in row["answer_info"].items():
            if value[0].startswith("Gia Hillford"):
                row["answer_info"][key] = ["", ""]
    for i, row in enumerate(rows):
        row["example_id"] = i
    return rows


def _key(row: dict[str, Any]) -> tuple:
    options = [row["ans0"], row["ans1"], row["ans2"]]
    unknown = row.get("unknown_label")
    if unknown is None:
        unknown = next(i for i in range(3) if row["answer_info"][f"ans{i}"][1] == "unknown")
    shown = tuple(sorted(UNKNOWN if i == unknown else o for i, o in enumerate(options)))
    gold = UNKNOWN if row["label"] == unknown else options[row["label"]]
    return (row["context_condition"], row["question_polarity"], row["context"], row["question"], shown, gold)


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], list[dict], list[dict]]:
    root = tmp_path_factory.mktemp("jsonl-intersectional")
    released = _released_rows()
    data = root / "released.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in released), encoding="utf-8")
    runner = CliRunner()
    result = runner.invoke(
        app,
        ["import", "bbq-jsonl", str(data), "--out", str(root / "sources"), "--report", str(root / "r.json")],
    )
    assert result.exit_code == 0, result.output
    built = runner.invoke(
        app, ["build", "--sources", str(root / "sources"), "--out", str(root / "build"), "--lang", "en"]
    )
    assert built.exit_code == 0, built.output
    rows = pq.read_table(root / "build" / "data" / "full" / "test-00000-of-00001.parquet").to_pylist()
    return root / "sources", json.loads((root / "r.json").read_text("utf-8")), released, rows


def test_every_released_row_comes_back(imported) -> None:
    _, report, released, rows = imported
    assert report["release_coverage"] == {
        "Race_x_SES": {"rows": 256 + 48, "reproduced": 304, "rate": 1.0},
        "Race_x_gender": {"rows": 80 + 24, "reproduced": 104, "rate": 1.0},
    }
    built = {_key(r) for r in rows}
    assert [r["example_id"] for r in released if _key(r) not in built] == []


def test_word_templates_build_only_the_rows_bbq_can_draw(imported) -> None:
    _, _, released, rows = imported
    for category in ("Race_x_SES", "Race_x_gender"):
        ours = {_key(r) for r in rows if r["template_id"] == f"{category}-1"}
        theirs = {_key(r) for r in released if r["category"] == category and r["question_index"] == "1"}
        assert ours == theirs, category
    labels = Counter(r["subcategory"] for r in rows if r["template_id"] == "Race_x_SES-1")
    assert set(labels) == set(LABELS)


def test_the_sources_hold_attributes_contrasts_and_bbqs_rewrites(imported) -> None:
    sources, _, _, _ = imported
    ses = load_yaml(sources / "templates" / "Race_x_SES" / "Race_x_SES-1.yaml").data
    assert ses["persons"]["NAME1"]["target"] is True
    assert ses["persons"]["NAME1"]["attribute"]["slot"] == "OCC1"
    assert ses["intersections"] == dict(
        zip(("same_group", "same_attribute", "both_differ"), LABELS, strict=True)
    )
    assert ses["ambiguous_context"]["en"] == SES_WORDS["ambiguous"]  # "an Avalonian" is a rewrite, not a word
    assert {r["pattern"] for r in ses["rewrites"]} >= {r"(\s[aA])(\s[aAeEiIoOuU])"}
    gender = load_yaml(sources / "templates" / "Race_x_gender" / "Race_x_gender-1.yaml").data
    assert gender["ambiguous_context"]["en"] == GENDER_WORDS["ambiguous"]  # "paid a woman" stays words
    assert {"pattern": "Latino woman", "replacement": "Latina woman"} in gender["rewrites"]
    vocab = load_yaml(sources / "vocab" / "Race_x_gender.yaml").data["groups"]
    others = vocab[gender["persons"]["NAME2"]["group"]]
    assert [f["text"]["en"] for f in others["fillers"]] == OTHER_RACES  # Latino read back from "Latina"


def test_proper_name_templates_pair_the_released_persons(imported) -> None:
    sources, report, released, rows = imported
    names = sorted((sources / "templates" / "Race_x_SES").glob("Race_x_SES-2*.yaml"))
    assert [p.stem for p in names] == [
        "Race_x_SES-2-r1",
        "Race_x_SES-2-r2",
        "Race_x_SES-2-r3",
    ]  # one per target
    first = load_yaml(names[0]).data
    assert first["review"]["status"] == "needs_changes"  # names: the Japanese side is rewritten without
    second = load_yaml(names[1]).data  # its person has no same-race partner in the rows
    assert list(second["intersections"]) == ["both_differ"]
    for category, draws in (("Race_x_SES", SES_NAME_DRAWS), ("Race_x_gender", GENDER_NAME_DRAWS)):
        released_names = {person[0] for _, t, o in draws for person in (t, o)}
        built = [r for r in rows if r["template_id"].startswith(f"{category}-2")]
        for row in built:  # a full name is its first two words (then the occupation, in Race_x_SES)
            named = [
                " ".join(text.split()[:2]).rstrip(",")
                for text, tag in row["answer_info"].values()
                if tag != "unknown"
            ]
            assert len(set(named)) == 2 and set(named) <= released_names, named
    codes = Counter(f["code"] for t in report["templates"] for f in t["findings"])
    assert codes["IM048"] == 4  # every question came in as intersectional


def test_rows_with_no_contrast_in_both_attributes_are_reported_and_fail_the_import(tmp_path) -> None:
    rows = [
        r
        for r in _released(SES_WORDS, _word_draws(LOW, HIGH, "lowSES", "highSES"))
        if r["additional_metadata"]["subcategory"] != "intersectional_c"
    ]
    rows += _released(GENDER_NAMES, GENDER_NAME_DRAWS)  # comes in, so the sources are written
    data = tmp_path / "released.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = CliRunner().invoke(
        app,
        [
            "import",
            "bbq-jsonl",
            str(data),
            "--out",
            str(tmp_path / "s"),
            "--report",
            str(tmp_path / "r.json"),
        ],
    )
    assert result.exit_code == 1, result.output
    report = json.loads((tmp_path / "r.json").read_text("utf-8"))
    assert report["release_coverage"]["Race_x_SES"]["reproduced"] == 0
    findings = [f for t in report["templates"] for f in t["findings"]]
    assert {"IM047", "IM007"} <= {f["code"] for f in findings if f["severity"] == "error"}
    assert all(f["line"] for f in findings if f["code"] == "IM047")
    assert "no template text could be recovered" in " ".join(result.output.split())
