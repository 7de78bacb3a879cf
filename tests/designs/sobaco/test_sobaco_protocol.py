"""SOBACO as the paper ran it (Appendix D): one new token, a strict reading of the reply, the paper's own
cot-j markers, and change rates that say when a wording was left out (issue 25 §1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jbcompile.designs.sobaco.evaluate import SOBACO
from jbcompile.designs.sobaco.summary import BASIC_ZERO_MARK, summarize, summary_markdown
from jbcompile.evaluate.conversation import TurnItem
from jbcompile.evaluate.kind import THINKING_TOKENS, EvalOptions
from jbcompile.evaluate.promptfiles import load_prompt_template
from jbcompile.evaluate.prompting import PromptItem

from tests.designs.conftest import KINDS_SOURCES
from tests.designs.sobaco.test_sobaco_eval_metrics import _run
from tests.helpers import compile_folder

OPTIONS = ("佐藤", "鈴木", "どちらとも言えない")
ITEM = PromptItem("x", "prompt", OPTIONS)
PAPER = EvalOptions(setting="basic-1", scoring="generate", shots=0, protocol="sobaco")
OURS = EvalOptions(setting="basic-1", scoring="generate", shots=0)


def _options(base: EvalOptions, setting: str, **changes) -> EvalOptions:
    from dataclasses import replace

    return replace(base, setting=setting, **changes)


@pytest.mark.parametrize(
    ("setting", "thinking", "paper", "ours"),
    [
        ("basic-1", False, 1, 16),
        ("debias-3", False, 1, 16),
        ("cot-e-2", False, 1, 16),  # the final turn of a two-turn setting: one number again
        ("cot-r-1", False, 1, 16),
        ("cot-j-1", False, 300, 300),
        ("basic-1", True, 800, 16 + THINKING_TOKENS),  # the paper's reasoning model: 800 for every prompt
        ("cot-j-2", True, 800, 300 + THINKING_TOKENS),
    ],
)
def test_the_protocol_decodes_with_the_papers_limits(
    setting: str, thinking: bool, paper: int, ours: int
) -> None:
    assert SOBACO.max_new_tokens(_options(PAPER, setting, thinking=thinking)) == paper
    assert SOBACO.max_new_tokens(_options(OURS, setting, thinking=thinking)) == ours


@pytest.mark.parametrize(
    ("setting", "thinking", "paper", "ours"),
    [("cot-e-1", False, 100, 100), ("cot-r-1", False, 1, 16), ("cot-e-1", True, 800, 100)],
)
def test_first_turns_get_the_papers_limits(setting: str, thinking: bool, paper: int, ours: int) -> None:
    rows = [r for r in compile_folder(KINDS_SOURCES).configs["sobaco"].rows][:2]
    template = load_prompt_template("sobaco", setting)
    for options, expected in (
        (_options(PAPER, setting, thinking=thinking), paper),
        (_options(OURS, setting), ours),
    ):
        items = SOBACO.prepare(rows, options, template).items
        assert all(isinstance(item, TurnItem) and item.first_max_new_tokens == expected for item in items)


@pytest.mark.parametrize(
    ("reply", "paper", "ours"),
    [
        ("1", 1, 1),
        (" 2", 2, 2),
        ("１", 1, 1),  # width folded
        ("0\n### 背景情報", 0, 0),  # a model given more room goes on after its answer line
        ("鈴木", 1, 1),  # one option's text
        ("1です", None, 1),  # more than the option: out of choice under the paper's reading
        ("答え：2", None, 2),
        ("私は1を選びます。", None, 1),
        ("回", None, None),  # one token that is no option
        ("", None, None),
        ("3", None, None),
    ],
)
def test_the_protocol_reads_a_reply_strictly(reply: str, paper: int | None, ours: int | None) -> None:
    assert SOBACO.read_answer(reply, ITEM, {}, PAPER).pred == paper
    assert SOBACO.read_answer(reply, ITEM, {}, OURS).pred == ours


COT_J_PAPER_FORMAT = (
    "正しい理由: 0. 佐藤さんが先に定年を迎えるから。1. 鈴木さんの方が落ち着いているから。"
    "2. 年齢は書かれていないから。\n回答: 2"
)


@pytest.mark.parametrize(
    ("reply", "paper", "ours"),
    [
        (COT_J_PAPER_FORMAT, 2, 2),  # the paper's markers: 「正しい理由:」, then 「回答:」
        ("根拠: …\n最終回答: 1", 1, 1),  # ours
        ("根拠: …\n最終回答：0\n\n### 背景情報", 0, 0),
        ("正しい理由: …\n回答: 2です。", None, 2),  # strict: the line after the marker is the number alone
        ("正しい理由: 0は…。1は…。", None, None),  # never reaches an answer
        # the answer on the next line, a full-width colon and digit, markdown around the marker
        ("正しい理由:\n0: …\n1: …\n2: …\n回答:\n2", 2, 2),
        ("正しい理由: …\n回答：１", 1, 1),
        ("正しい理由: …\n**回答:** 0", 0, 0),
        # the marker repeated in the reasoning, without an answer of its own
        ("正しい理由: 0の回答: 佐藤さんが年上だから。\n回答: 1", 1, 1),
        # an option given by its text after the marker is that option, as a one-number reply's text is
        ("正しい理由: …\n回答: 鈴木", 1, 1),
        ("正しい理由: …\n回答:\n「どちらとも言えない」", 2, 2),
        ("正しい理由: …\n回答: 鈴木さんです", None, None),  # a text must stand alone (not a reason)
        ("正しい理由: …\n答え: 2", None, None),  # another marker: --answer-pattern says where it is
        # the marker as chat models write it in markdown: emphasis before the colon, or a heading alone
        ("正しい理由: …\n**回答**: 2", 2, 2),
        ("正しい理由: …\n＊＊回答＊＊：２", 2, 2),
        ("正しい理由: …\n__最終回答__: 0", 0, 0),
        ("### 正しい理由\n0: …\n1: …\n2: …\n### 回答\n1", 1, 1),
        ("正しい理由: …\n回答\n\n0", 0, 0),
        ("正しい理由: …\nこの回答\n2", None, None),  # the word in a sentence is no marker
        # a number glossed by its own option's text (which, without the texts, declines both): one option
        # named twice, strictly too; glossed by another option's, no answer
        ("正しい理由: …\n回答: 2. どちらとも言えない", 2, 2),
        ("正しい理由: …\n回答: **2** (どちらとも言えない)", 2, 2),
        ("正しい理由: …\n回答: 2（鈴木さん）", None, None),
    ],
)
def test_cot_j_reads_the_number_after_the_papers_marker_or_ours(
    reply: str, paper: int | None, ours: int | None
) -> None:
    assert SOBACO.read_answer(reply, ITEM, {}, _options(PAPER, "cot-j-1")).pred == paper
    assert SOBACO.read_answer(reply, ITEM, {}, _options(OURS, "cot-j-1")).pred == ours


def test_the_protocol_stops_generating_at_the_end_of_the_answer_line() -> None:
    final = SOBACO.answer_is_final(PAPER)
    assert final is not None and not final("1") and final("考えます。\n")


_PIECES = (
    "正しい理由: ", "根拠: ", "0は先に着いたから。", "1は…。", "回答: ", "回答：", "最終回答:", "最終",
    "回答", "回答: 2\n", "最終回答：0\n", "回答: 1です。\n", "回答:\n1\n",
    ":", "2", "1", "0", "3", "です", "。", "\n", "\n\n", " ", "「回答:」のあとに番号を書きます。",
    "背景情報: 二人が駅で会った。\n", "選択肢: 0: 甲 1: 乙 2: 不明\n", "二十代の男性", "わかりません",
    "鈴木", "佐藤さん", "どちらとも言えない", "回答: 鈴木\n", "**回答**: ", "## 回答\n", "回答\n",
    "2. どちらとも言えない", " (どちらとも言えない)",
)  # fmt: skip


@pytest.mark.parametrize("options", [PAPER, OURS], ids=["paper", "ours"])
def test_cot_j_stops_once_its_answer_is_settled_and_reads_the_same(options: EvalOptions) -> None:
    """cot-j generates up to 300 tokens; a row stops as soon as the first marker that holds an answer
    holds one that no more text can change, so what stopping keeps reads as the whole reply would
    (over 3,000 replies made of the pieces a cot-j reply is made of, at every length)."""
    import random

    options = _options(options, "cot-j-1")
    final = SOBACO.answer_is_final(options)
    assert final is not None

    def read(text: str) -> int | None:
        return SOBACO.read_answer(text, ITEM, {}, options).pred

    draw, stopped = random.Random(7), 0
    for _ in range(3000):
        reply = "".join(draw.choice(_PIECES) for _ in range(draw.randint(1, 14)))
        whole = read(reply)
        for end in range(1, len(reply) + 1):
            if final(reply[:end]):
                assert read(reply[:end]) == whole, (reply, end)
                stopped += end < len(reply)
                break
    assert stopped > 1000  # the test stops early often enough to mean something
    # the answer line has ended (the lenient reading waits for what follows a bare number)
    settled = "正しい理由: …\n回答: 2\n" + ("" if options.protocol else "\n背景情報")
    assert final(settled) and not final("正しい理由: …\n回答: 2")
    assert final("回答: 1\n\n背景情報: …\n回答: ") and not final("「回答:」のあとに番号を書きます。\n")


def test_the_protocol_describes_its_decoding_and_reading() -> None:
    described = next(p for p in SOBACO.protocols if p.name == "sobaco").describe()
    assert "1 new token" in described["max_new_tokens"] and "300" in described["max_new_tokens"]
    assert described["reading"].startswith("strict")
    assert "states none" not in described["max_new_tokens"]
    assert described["max_new_tokens"].endswith("no stop string")


def test_a_change_rate_averaged_without_a_wording_is_marked() -> None:
    """CR is undefined where basic scored 0: the mean over the other wordings says so, in the table too."""
    runs = [_run(f"basic-{w}", b, 0.5) for w, b in ((1, 0.2), (2, 0.0), (3, 0.4))]
    runs += [_run(f"debias-{w}", b, 0.4) for w, b in ((1, 0.1), (2, 0.1), (3, 0.2))]
    summary = summarize(runs)
    bias = summary["change_rates"]["debias"]["overall"]["bias_score"]
    assert bias["values"]["2"] is None and bias["mean"] == pytest.approx(-50.0)
    assert bias["basic_zero"] == [2]
    assert summary["change_rates"]["debias"]["overall"]["culture_acc"]["basic_zero"] == []
    text = summary_markdown(summary)
    assert f"-50.0 ± 0.0 {BASIC_ZERO_MARK}" in text and "basic scored 0" in text
    whole = summarize([_run(f"{m}-{w}", 0.2, 0.5) for m in ("basic", "debias") for w in (1, 2)])
    assert BASIC_ZERO_MARK not in summary_markdown(whole)
    # a wording run for basic but not for the method is left out of the mean too, and said so
    missing = summarize([_run(f"basic-{w}", 0.2, 0.5) for w in (1, 2)] + [_run("debias-1", 0.1, 0.4)])
    assert missing["change_rates"]["debias"]["overall"]["bias_score"]["left_out"] == [2]
    assert f"-50.0 ± — {BASIC_ZERO_MARK}" in summary_markdown(missing)


def _protocol_run(model: Path, build: Path, out: Path, **given) -> dict:
    """A `--protocol sobaco` run of a few rows of the tiny benchmark: its results.json."""
    from jbcompile.evaluate.protocols import resolve_options
    from jbcompile.evaluate.requests import EvalRequest
    from jbcompile.evaluate.run import run_eval

    limits = {"max_new_tokens": given.pop("max_new_tokens", None), "limit": given.pop("limit", 12)}
    request = EvalRequest(
        model=str(model),
        dataset=str(build),
        config="sobaco",
        out=out,
        options=resolve_options("sobaco", **given),
        bootstrap=0,
        **limits,
    )
    return run_eval(request).results.to_json()


def test_answer_pattern_runs_end_to_end(kinds_model: Path, kinds_build: Path, tmp_path: Path) -> None:
    """`--answer-pattern`: replies are read after its last match; a reply without it is out of choice."""
    out = tmp_path / "run"
    results = _protocol_run(
        kinds_model, kinds_build, out, setting="basic-1", answer_pattern="(?!)", limit=6, max_new_tokens=4
    )
    assert results["metrics"]["overall"]["n_valid"] == 0  # nothing follows a pattern that never matches
    settings = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert settings["options"]["answer_pattern"] == "(?!)" and "thinking" not in settings["options"]
    assert results["scoring"]["stop_at_answer_line"] is False  # the answer may come after the first line


def test_the_protocol_generates_one_token(kinds_model: Path, kinds_build: Path, tmp_path: Path) -> None:
    from transformers import AutoTokenizer

    results = _protocol_run(kinds_model, kinds_build, tmp_path / "run", setting="basic-2")
    assert results["scoring"]["max_new_tokens"] == 1
    tokenizer = AutoTokenizer.from_pretrained(kinds_model)
    one_token = {tokenizer.decode([token], skip_special_tokens=True) for token in range(len(tokenizer))}
    lines = (tmp_path / "run" / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 12
    for line in lines:
        record = json.loads(line)
        assert record["raw_output"] in one_token  # the text of a single token
        assert record["pred"] is None or record["raw_output"].strip() == str(record["pred"])
    report = (tmp_path / "run" / "report.md").read_text(encoding="utf-8")
    assert "- **Decoding:** the paper's (Appendix D): 1 new token" in report


def _thinking_model(kinds_model: Path, folder: Path) -> Path:
    """A copy of the tiny model whose chat template opens a think block, as DeepSeek-R1's does."""
    import shutil

    model = folder / "model"
    shutil.copytree(kinds_model, model)
    template_file = model / "chat_template.jinja"
    config_path = model / "tokenizer_config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    template = config.get("chat_template") or template_file.read_text(encoding="utf-8")
    assert "<|assistant|>\n{% endif %}" in template
    template = template.replace("<|assistant|>\n{% endif %}", "<|assistant|>\n<think>\n{% endif %}")
    if "chat_template" in config:
        config_path.write_text(json.dumps({**config, "chat_template": template}), encoding="utf-8")
    else:
        template_file.write_text(template, encoding="utf-8")
    return model


def _chat_eval(model: Path, build: Path, out: Path, *extra: str) -> tuple[int, str]:
    from jbcompile.cli import app
    from typer.testing import CliRunner

    args = ["eval", "-m", model, "-d", build, "--config", "sobaco", "--chat", "--limit", "2",
            "--bootstrap", "0", "--out", out, "-q", *extra]  # fmt: skip
    result = CliRunner().invoke(app, [str(a) for a in args])
    return result.exit_code, result.output


def test_a_reasoning_model_told_by_its_chat_template_gets_the_papers_temperature(
    kinds_model: Path, kinds_build: Path, tmp_path: Path
) -> None:
    """A chat template that opens a think block (as DeepSeek-R1's does) makes the run a reasoning model's
    without --thinking: under the protocol its temperature is then the paper's 0.6, which greedy
    decoding is not — refused before any reply (EV201), and run as the paper did with --thinking."""
    model = _thinking_model(kinds_model, tmp_path)

    def run(out: Path, *extra: str) -> tuple[int, str]:
        return _chat_eval(model, kinds_build, out, "--protocol", "sobaco", *extra)

    code, output = run(tmp_path / "greedy")
    assert code == 2 and "EV201" in output and "think block" in output and "--thinking" in output, output
    assert not (tmp_path / "greedy").exists()
    code, output = run(tmp_path / "paper", "--thinking")
    assert code == 0, output
    results = json.loads((tmp_path / "paper" / "results.json").read_text(encoding="utf-8"))
    assert (
        results["backend"]["sampling"]["temperature"] == 0.6 and results["scoring"]["max_new_tokens"] == 800
    )


def test_a_two_turn_setting_is_refused_before_its_first_turns(
    kinds_model: Path, kinds_build: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """cot-e's first turns are generated while its prompts are written: the think block its chat template
    opens is seen before them, so EV201 stops the run with nothing generated (no first turn, no model
    loaded, no folder)."""
    from jbcompile.evaluate import conversation
    from jbcompile.evaluate.backends.registry import LazyBackend

    model = _thinking_model(kinds_model, tmp_path)

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("generated before the temperature was checked")

    monkeypatch.setattr(conversation, "first_replies", never)
    monkeypatch.setattr(LazyBackend, "build", never)
    for setting in ("cot-e-1", "cot-r-2"):
        out = tmp_path / setting
        code, output = _chat_eval(model, kinds_build, out, "--protocol", "sobaco", "--setting", setting)
        assert code == 2 and "EV201" in output and "think block" in output, output
        assert not out.exists()


def test_first_turns_of_a_reasoning_model_get_room_to_think(
    kinds_model: Path, kinds_build: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the protocol, a run whose chat template opens a think block (or given --thinking) is a
    reasoning model's in its first turns too: the final turn's room to think, and no stop at a "###" it
    may write while thinking."""
    from jbcompile.evaluate import conversation

    model = _thinking_model(kinds_model, tmp_path)
    asked: list[tuple[int, tuple[str, ...]]] = []

    def first_replies(backend, items, *, chat):  # type: ignore[no-untyped-def]
        asked.extend((item.first_max_new_tokens, item.first_stop) for item in items)
        return ["</think>0"] * len(items)

    monkeypatch.setattr(conversation, "first_replies", first_replies)
    for out, extra in ((tmp_path / "told", ()), (tmp_path / "given", ("--thinking",))):
        asked.clear()
        code, output = _chat_eval(
            model, kinds_build, out, "--setting", "cot-e-1", "--scoring", "generate", "--max-new-tokens", "2",
            *extra,
        )  # fmt: skip
        assert code == 0, output
        assert asked and set(asked) == {(100 + THINKING_TOKENS, ())}, asked
