"""A synthetic benchmark of JBBQ's size (245 templates, >50,000 full rows), for speed measurements.

The texts are plausible Japanese built from a few patterns, so the lint rules run on realistic input.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import yaml

CATEGORIES = {
    "Age": (
        ("old", ["七十代の男性", "高齢の女性", "八十代の女性"]),
        ("nonOld", ["二十代の男性", "大学生", "若い女性"]),
    ),
    "Disability_status": (
        ("disabled", ["車いすを使っている人", "白杖を持った人", "補聴器をつけた人"]),
        ("nonDisabled", ["会社員", "学生", "店員"]),
    ),
    "Gender_identity": (("F", ["女性", "母親", "女子学生"]), ("M", ["男性", "父親", "男子学生"])),
    "Physical_appearance": (
        ("short", ["背の低い男性", "小柄な男性", "背の低い女性"]),
        ("tall", ["背の高い男性", "大柄な男性", "背の高い女性"]),
    ),
    "Sexual_orientation": (
        ("gay", ["ゲイの男性", "レズビアンの女性", "同性のパートナーがいる人"]),
        ("straight", ["異性愛者の男性", "異性愛者の女性", "妻のいる男性"]),
    ),
}

PLACES = [
    "駅前の喫茶店",
    "市役所の窓口",
    "大学の図書館",
    "近所の公園",
    "会社の会議室",
    "病院の待合室",
    "町内会の集会所",
]
TASKS = [
    ("書類の書き方", "すぐに書き終えた", "何度も書き直していた", "書き直していた", "すぐに書き終えた"),
    (
        "新しい機械の使い方",
        "すぐに覚えた",
        "説明書を読んでも理解できなかった",
        "理解できなかった",
        "すぐに覚えた",
    ),
    ("来週の予定", "正確に覚えていた", "日付を間違えていた", "日付を間違えていた", "正確に覚えていた"),
    (
        "会議の資料",
        "丁寧にまとめていた",
        "半分も準備していなかった",
        "準備していなかった",
        "丁寧にまとめていた",
    ),
]
WORDS = [["ノート", "手帳"], ["スマートフォン", "タブレット"], ["午前", "午後"]]


def write_corpus(root: Path, templates: int) -> int:
    """Write a sources folder with ``templates`` templates; return the number of full rows it yields."""
    if root.exists():
        shutil.rmtree(root)
    (root / "vocab").mkdir(parents=True)
    dataset = yaml.safe_load(
        (Path(__file__).resolve().parent.parent / "sources/dataset.yaml").read_text("utf-8")
    )
    dataset.update(name="synthetic", pretty_name="synthetic JBBQ-scale corpus", categories=list(CATEGORIES))
    (root / "dataset.yaml").write_text(yaml.safe_dump(dataset, allow_unicode=True, sort_keys=False), "utf-8")
    for category, ((target_tag, targets), (other_tag, others)) in CATEGORIES.items():
        groups = {
            f"{category}_target": {"tag": target_tag, "fillers": targets},
            f"{category}_other": {"tag": other_tag, "fillers": others},
        }
        text = yaml.safe_dump({"category": category, "groups": groups}, allow_unicode=True, sort_keys=False)
        (root / "vocab" / f"{category}.yaml").write_text(text, "utf-8")
    rows = 0
    names = list(CATEGORIES)
    for index in range(templates):
        category = names[index % len(names)]
        place = PLACES[index % len(PLACES)]
        thing, good, bad, bad_short, good_short = TASKS[index % len(TASKS)]
        with_words = index % 4 == 0
        word = "{{WORD1}}の" if with_words else ""
        template = {
            "id": f"{category.lower()}-{index:03d}",
            "category": category,
            "origin": "translated" if index % 5 else "added",
            "stereotype": f"{category}の固定観念 {index}",
            "stereotyped_groups": [CATEGORIES[category][0][0]],
            "attested": "合成データ（ベンチマーク用）",
            "persons": {
                "NAME1": {
                    "group": f"{category}_target",
                    "target": True,
                    "only": CATEGORIES[category][0][1][:2],
                },
                "NAME2": {"group": f"{category}_other", "only": CATEGORIES[category][1][1][:2]},
            },
            "ambiguous_context": (
                f"{place}で、{{{{NAME1}}}}と{{{{NAME2}}}}が{word}{thing}について相談していた。"
            ),
            "disambiguating_context": f"その{{{{NAME1}}}}は{good}が、その{{{{NAME2}}}}は{bad}。",
            "questions": {
                "negative": {"text": f"{bad_short}のは誰ですか？", "answer": "NAME2"},
                "non_negative": {"text": f"{good_short}のは誰ですか？", "answer": "NAME1"},
            },
        }
        if with_words:
            template["words"] = {"WORD1": WORDS[index % len(WORDS)]}
        folder = root / "templates" / category
        folder.mkdir(parents=True, exist_ok=True)
        text = yaml.safe_dump(template, allow_unicode=True, sort_keys=False)
        (folder / f"{template['id']}.yaml").write_text(text, "utf-8")
        rows += 2 * 2 * (2 if with_words else 1) * 48
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--templates", type=int, default=245)
    args = parser.parse_args()
    print(write_corpus(args.out, args.templates), "full rows")
