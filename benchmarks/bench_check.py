"""Speed of `jbcompile check` on a JBBQ-scale corpus (245 templates, every filled variant analysed).

Two corpora:

- ``varied``: written here. 245 templates whose texts are all distinct (no two templates share a
  sentence, so the analysis cache gets no help across templates), 3 target × 3 other fillers, a
  lexical slot with 2–3 alternatives in half of them: ~13,000 distinct filled texts.
- ``build-bench``: the corpus of benchmarks/synthetic.py (the one bench_build.py measures), to set
  the checks beside the whole build.

Each figure is the median of several runs, each in a fresh process (one tagger per process, cold
caches): ``run_checks`` alone (timed inside the process, after `load_project`), and the whole
`jbcompile check` command (wall time, start-up included).

    python benchmarks/bench_check.py [--runs 5] [--templates 245]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synthetic import write_corpus  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
GOAL_SECONDS = 5.0

CATEGORIES = {
    "Age": (["七十代の男性", "高齢の女性", "八十代の女性"], ["二十代の男性", "大学生", "若い女性"]),
    "Disability_status": (
        ["車いすを使っている人", "白杖を持った人", "補聴器をつけた人"],
        ["会社員", "学生", "店員"],
    ),
    "Gender_identity": (["女性", "母親", "女子学生"], ["男性", "父親", "男子学生"]),
    "Physical_appearance": (
        ["背の低い男性", "小柄な男性", "背の低い女性"],
        ["背の高い男性", "大柄な男性", "背の高い女性"],
    ),
    "Sexual_orientation": (
        ["ゲイの男性", "レズビアンの女性", "同性のパートナーがいる人"],
        ["異性愛者の男性", "異性愛者の女性", "妻のいる男性"],
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
TOPICS = [
    "書類の書き方",
    "新しい機械の使い方",
    "来週の予定",
    "会議の資料",
    "旅行の計画",
    "引っ越しの準備",
    "料理の手順",
]
VERBS = ["相談していた", "話し合っていた", "説明を受けていた", "順番を待っていた", "意見を交わしていた"]
GOOD = ["すぐに書き終えた", "正確に覚えていた", "丁寧にまとめていた", "落ち着いて対応した", "手際よく進めた"]
BAD = [
    "何度も書き直していた",
    "日付を間違えていた",
    "半分も準備していなかった",
    "途中で投げ出した",
    "手順を忘れていた",
]
WORDS = [
    ["ノート", "手帳", "メモ帳"],
    ["スマートフォン", "タブレット"],
    ["午前", "午後", "夕方"],
    ["電車", "バス"],
]


def _pick(items: list[str], index: int, salt: int) -> str:
    return items[(index // (salt + 1) + 3 * salt) % len(items)]


def write_varied_corpus(root: Path, templates: int = 245) -> None:
    """A sources folder whose template texts are all distinct (a number makes each one unique)."""
    (root / "vocab").mkdir(parents=True, exist_ok=True)
    dataset = yaml.safe_load((REPO / "sources/dataset.yaml").read_text("utf-8"))
    dataset.update(name="bench-check", pretty_name="bench check", categories=list(CATEGORIES), checks={})
    (root / "dataset.yaml").write_text(yaml.safe_dump(dataset, allow_unicode=True, sort_keys=False), "utf-8")
    for category, (targets, others) in CATEGORIES.items():
        groups = {
            f"{category}_target": {"tag": "target", "fillers": targets},
            f"{category}_other": {"tag": "other", "fillers": others},
        }
        text = yaml.safe_dump({"category": category, "groups": groups}, allow_unicode=True, sort_keys=False)
        (root / "vocab" / f"{category}.yaml").write_text(text, "utf-8")
    names = list(CATEGORIES)
    for index in range(templates):
        category = names[index % len(names)]
        word = "{{WORD1}}の" if index % 2 == 0 else ""
        room = f"{index + 2}階の" if index % 3 else f"第{index + 1}"
        good, bad = _pick(GOOD, index, 4), _pick(BAD, index, 5)
        template = {
            "id": f"{category.lower()}-{index:03d}",
            "category": category,
            "origin": "translated",
            "stereotype": f"{category}についての固定観念その{index + 1}",
            "stereotyped_groups": ["target"],
            "attested": "合成データ（ベンチマーク用）",
            "persons": {
                "NAME1": {"group": f"{category}_target", "target": True},
                "NAME2": {"group": f"{category}_other"},
            },
            "ambiguous_context": f"{_pick(PLACES, index, 1)}の{room}席で、{{{{NAME1}}}}と{{{{NAME2}}}}が"
            f"{word}{_pick(TOPICS, index, 2)}について{_pick(VERBS, index, 3)}。"
            f"{index + 1}回目の集まりだった。",
            "disambiguating_context": f"その{{{{NAME1}}}}は{good}が、その{{{{NAME2}}}}は{bad}。"
            f"{index + 1}回目にして初めてのことだった。",
            "questions": {
                "negative": {"text": f"{bad}のは誰ですか？", "answer": "NAME2"},
                "non_negative": {"text": f"{good}のは誰ですか？", "answer": "NAME1"},
            },
        }
        if word:
            template["words"] = {"WORD1": WORDS[index % len(WORDS)]}
        folder = root / "templates" / category
        folder.mkdir(parents=True, exist_ok=True)
        text = yaml.safe_dump(template, allow_unicode=True, sort_keys=False, width=1000)
        (folder / f"{template['id']}.yaml").write_text(text, "utf-8")


_INNER = """
import json, sys, time
from pathlib import Path
from jbcompile.project import load_project
from jbcompile.checks import run_checks
start = time.perf_counter()
project = load_project(Path(sys.argv[1]))
loaded = time.perf_counter()
diagnostics = run_checks(project)
done = time.perf_counter()
from jbcompile.checks.morph import analyzer
from jbcompile.designs import get_kind
texts = sum(len(list(get_kind(t.kind).filled_texts(t, project))) for t in project.templates)
print(json.dumps({"load": loaded - start, "checks": done - loaded, "findings": len(diagnostics),
                  "analyses": analyzer().cache_size(), "filled_texts": texts}))
"""


def run_inner(sources: Path) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", _INNER, str(sources)], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def run_cli(sources: Path) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "jbcompile.cli", "check", "--sources", str(sources)],
        capture_output=True,
        check=False,
    )
    return time.perf_counter() - start


def measure(label: str, sources: Path, runs: int) -> dict:
    inner = [run_inner(sources) for _ in range(runs)]
    cli = [run_cli(sources) for _ in range(runs)]
    return {
        "corpus": label,
        "templates": len(list((sources / "templates").rglob("*.yaml"))),
        "filled_texts": inner[0]["filled_texts"],
        "distinct_analyses": inner[0]["analyses"],
        "findings": inner[0]["findings"],
        "load_project_s": round(statistics.median(r["load"] for r in inner), 3),
        "run_checks_s": round(statistics.median(r["checks"] for r in inner), 3),
        "run_checks_min_s": round(min(r["checks"] for r in inner), 3),
        "cli_check_s": round(statistics.median(cli), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--templates", type=int, default=245)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        varied = Path(tmp) / "varied"
        write_varied_corpus(varied, args.templates)
        build_bench = Path(tmp) / "build-bench"
        write_corpus(build_bench, args.templates)
        results = [
            measure("varied", varied, args.runs),
            measure("build-bench", build_bench, args.runs),
            measure("bundled", REPO / "sources", args.runs),
        ]
    for result in results:
        print(json.dumps(result, ensure_ascii=False))
    worst = max(r["run_checks_s"] for r in results)
    print(
        f"goal: run_checks under {GOAL_SECONDS} s at JBBQ scale — worst median {worst} s "
        f"({'met' if worst < GOAL_SECONDS else 'NOT met'})"
    )


if __name__ == "__main__":
    main()
