"""The exported lm-eval `_gen` tasks read a reply as `jbcompile eval` reads it (jbcompile's own reader, not
a regex of the export's), and `jbcompile score` reads their samples' replies the same way: run in the real
lm-evaluation-harness with a model that gives scripted replies, ordinary Japanese ones included."""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from jbcompile.cli import app
from typer.testing import CliRunner

KINDS_SOURCES = Path(__file__).parents[1] / "designs" / "fixtures" / "kinds_sources"

# replies that a first-label regex reads otherwise than eval (h76's findings), and plain ones
BBQ_REPLIES = [
    "答えは0ではなく2です。",
    "1ですか？いいえ、2です。",
    "2人のうち、答えは1です。",
    "選択肢1は違います。答えは0。",
    "1かもしれないし、2かもしれない",
    "2",
    "0です。",
    "わかりません",
]
JUBAKU_REPLIES = ["Aではなく、Bです。", "Bではなく、Aです。", "A", "応答Bの方が適切です。", "どちらとも"]


def run_cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def kinds_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from jbcompile.build import compile_project, write_build
    from jbcompile.project import load_project

    out = tmp_path_factory.mktemp("kinds-build") / "build"
    write_build(compile_project(load_project(KINDS_SOURCES), checks=False), out)
    return out


def scripted_model(replies: Sequence[str]) -> Any:
    """An lm-eval model whose n-th reply is ``replies[n % len]`` (in the order lm-eval asks)."""
    from lm_eval.api.model import LM

    class Scripted(LM):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.next = itertools.cycle(replies)

        def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
            return [next(self.next) for _ in requests]

        def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list[tuple[float, bool]]:
            raise NotImplementedError

        def loglikelihood_rolling(self, requests: list[Any], disable_tqdm: bool = False) -> list[float]:
            raise NotImplementedError

    return Scripted()


def eval_metrics(kind_name: str, samples: list[dict[str, Any]], setting: str) -> dict[str, Any]:
    """The metrics of the samples' raw replies read by the design's `eval` reader (read_answer)."""
    from jbcompile.evaluate.bootstrap import point_metrics
    from jbcompile.evaluate.kind import EvalOptions
    from jbcompile.evaluate.prompting import PromptItem
    from jbcompile.evaluate.registered import get_eval_kind

    kind = get_eval_kind(kind_name)
    options = EvalOptions(task="qa", setting=setting, scoring="generate")
    records = []
    for sample in samples:
        doc, (reply,) = sample["doc"], sample["resps"][0]
        choices = tuple(doc[f"ans{i}"] for i in range(len(kind.option_labels)))
        pred = kind.read_answer(reply, PromptItem("", "", choices), {}, options).pred
        records.append(kind.base_record(doc, "qa") | {"pred": pred})
    return point_metrics(kind.prepare_records(records), kind.count, kind.count_names, kind.formulas)


def same(harness: float, ours: Any) -> bool:
    if math.isnan(harness):
        return ours is None or (isinstance(ours, float) and math.isnan(ours))
    return ours is not None and math.isclose(harness, float(ours), rel_tol=1e-9, abs_tol=1e-12)


def differing(harness: dict[str, Any], ours: dict[str, Any], metrics: list[str]) -> dict[str, Any]:
    """The metrics (``name,filter``) whose harness value is not ours."""
    pairs = {m: (harness[m], ours.get(m.split(",")[0])) for m in metrics}
    return {m: pair for m, pair in pairs.items() if not same(*pair)}


@pytest.mark.parametrize(
    ("which", "kind_name", "task", "replies"),
    [
        ("bbq", "bbq", "eval_fixture_lite_basic_gen", BBQ_REPLIES),
        ("kinds", "jubaku", "kinds_bench_jubaku_basic_gen", JUBAKU_REPLIES),
    ],
)
def test_gen_tasks_read_replies_as_jbcompile_eval_and_score_do(
    which: str,
    kind_name: str,
    task: str,
    replies: list[str],
    build_dir: Path,
    kinds_build: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from jbcompile.evaluate.registered import get_eval_kind
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.setenv(name, "1")
    build = build_dir if which == "bbq" else kinds_build
    tasks = tmp_path / "tasks"
    code, output = run_cli("export", "lm-eval", str(build), "--out", str(tasks), "--local")
    assert code == 0, output
    out = simple_evaluate(
        model=scripted_model(replies),
        tasks=[task],
        task_manager=TaskManager(include_path=str(tasks)),
        log_samples=True,
    )
    assert out is not None
    samples = out["samples"][task]
    new_labels = [s["filtered_resps"] for s in samples]
    assert {s["resps"][0][0] for s in samples} == set(replies)  # every scripted reply was read
    harness = out["results"][task]
    ours = eval_metrics(kind_name, samples, "basic")
    metrics = [m for m in harness if m.endswith(",jbcompile") and not m.split(",")[0].endswith("_stderr")]
    assert len(metrics) > 4, sorted(harness)
    assert not differing(harness, ours, metrics), "lm-eval _gen vs jbcompile eval's reading of the replies"
    # the same samples, written as lm-eval's --log_samples writes them, scored by `jbcompile score`
    log = tmp_path / f"samples_{task}_2026.jsonl"
    log.write_text("".join(json.dumps(s, ensure_ascii=False, default=str) + "\n" for s in samples), "utf-8")
    code, output = run_cli("score", str(log), "--out", str(tmp_path / "scored"), "--bootstrap", "0")
    assert code == 0, output
    scored = json.loads((tmp_path / "scored" / "results.json").read_text("utf-8"))["metrics"]["overall"]
    assert not differing(harness, scored, metrics), "lm-eval _gen vs jbcompile score"
    # a log of an earlier export, whose filter ("option") was a regex: score reads the replies, not its labels
    labels = "".join(get_eval_kind(kind_name).option_labels)
    regex = re.compile(f"(?<![0-9A-Za-z])([{labels}])(?![0-9A-Za-z])")
    for sample in samples:
        found = regex.search(sample["resps"][0][0])
        sample["filter"], sample["filtered_resps"] = "option", [found.group(1) if found else "[none]"]
    assert any(s["filtered_resps"] != s_new for s, s_new in zip(samples, new_labels, strict=True))
    log.write_text("".join(json.dumps(s, ensure_ascii=False, default=str) + "\n" for s in samples), "utf-8")
    code, output = run_cli("score", str(log), "--out", str(tmp_path / "old"), "--bootstrap", "0")
    assert code == 0, output
    scored = json.loads((tmp_path / "old" / "results.json").read_text("utf-8"))["metrics"]["overall"]
    assert not differing(harness, scored, metrics), "jbcompile score of an earlier export's log"


@pytest.mark.parametrize(
    ("labels", "options", "reply", "expected"),
    [
        ("012", ["十代の男性", "年配の男性", "不明"], "答えは0ではなく2です。", 2),
        ("012", ["十代の男性", "年配の男性", "不明"], "1ですか？いいえ、2です。", 2),
        ("012", ["十代の男性", "年配の男性", "不明"], "2人のうち、答えは1です。", 1),
        ("012", ["十代の男性", "年配の男性", "不明"], "選択肢1は違います。答えは0。", 0),
        ("012", ["十代の男性", "年配の男性", "不明"], "1かもしれないし、2かもしれない", None),
        ("AB", ["応答その一", "応答その二"], "Aではなく、Bです。", 1),
    ],
)
def test_the_exported_filter_is_jbcompiles_reader(
    labels: str,
    options: list[str],
    reply: str,
    expected: int | None,
    build_dir: Path,
    kinds_build: Path,
    tmp_path: Path,
) -> None:
    """The filter the `_gen` tasks run (their `reader.py`) labels a reply with the option eval reads."""
    import importlib.util

    from jbcompile.evaluate.parsing import read_reply

    assert read_reply(reply, labels, options) == expected
    build, kind = (build_dir, "bbq") if labels == "012" else (kinds_build, "jubaku")
    code, output = run_cli("export", "lm-eval", str(build), "--out", str(tmp_path / "tasks"), "--local")
    assert code == 0, output
    spec = importlib.util.spec_from_file_location("reader", tmp_path / "tasks" / kind / "reader.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    doc = {f"ans{i}": text for i, text in enumerate(options)}
    label = labels[expected] if expected is not None else "[none]"
    assert module.ReadReply(setting="basic").apply([[reply]], [doc]) == [[label]]


def test_the_gen_tasks_say_so_when_jbcompile_is_missing(build_dir: Path, tmp_path: Path) -> None:
    """Without jbcompile the reader module stops with an ImportError that says what to install: never a
    reading of its own."""
    import subprocess
    import sys

    code, output = run_cli("export", "lm-eval", str(build_dir), "--out", str(tmp_path / "tasks"), "--local")
    assert code == 0, output
    script = (
        "import sys; sys.modules['jbcompile'] = None\n"
        "import importlib.util as u\n"
        f"s = u.spec_from_file_location('reader', {str(tmp_path / 'tasks' / 'bbq' / 'reader.py')!r})\n"
        "s.loader.exec_module(u.module_from_spec(s))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "ImportError" in done.stderr and "pip install 'jbcompile==" in done.stderr, done.stderr[-2000:]
