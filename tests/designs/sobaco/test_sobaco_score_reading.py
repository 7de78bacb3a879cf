"""`jbcompile score` reads a column of sobaco replies as the setting that asked them (issue 25 §1.1): a
cot-j reply after its 「回答:」, a one-number reply strictly under the paper's protocol; what it cannot
tell (a cot-j-looking reply, no --setting) is refused, and our own predictions count as the paper's
only when they were read under its protocol."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jbcompile.diagnostics import DiagnosticError
from jbcompile.evaluate.dataset import load_rows
from jbcompile.evaluate.requests import ScoreRequest
from jbcompile.evaluate.score import run_score

from tests.designs.sobaco.test_sobaco_protocol import _protocol_run

COT_J = "正しい理由: 0. 先に着いたから。1. 落ち着いているから。2. 書かれていないから。\n回答: {gold}"
# a base model given room goes on into the next example of the prompt, with its own 「回答:」
COT_J_RUNNING_ON = COT_J + "\n\n背景情報: 二人が駅で会った。\n回答: {other}"


def _replies(build: Path, folder: Path, reply: str, rows: int = 24) -> Path:
    """A file of the build's sobaco rows with a column of replies (``{gold}``: the row's gold)."""
    path = folder / "replies.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for row in load_rows(str(build), "sobaco").rows[:rows]:
            text = reply.format(gold=row["label"], other=(row["label"] + 1) % 3)
            handle.write(json.dumps({**row, "response": text}, ensure_ascii=False) + "\n")
    return path


def _score(path: Path, out: Path, **given) -> dict:
    request = ScoreRequest(predictions=path, out=out, bootstrap=0, **given)
    return run_score(request).results.to_json()


def _codes(path: Path, out: Path, **given) -> list[str]:
    with pytest.raises(DiagnosticError) as raised:
        _score(path, out, **given)
    assert not out.exists()  # nothing written
    return [d.code for d in raised.value.diagnostics]


@pytest.mark.parametrize("protocol", ["sobaco", None])
@pytest.mark.parametrize("setting", ["cot-j-1", "cot-j-3"])
def test_cot_j_replies_are_read_after_their_marker(
    kinds_build: Path, tmp_path: Path, protocol: str | None, setting: str
) -> None:
    path = _replies(kinds_build, tmp_path, COT_J_RUNNING_ON)
    results = _score(path, tmp_path / "s", prediction_field="response", protocol=protocol, setting=setting)
    overall = results["metrics"]["overall"]
    assert (
        overall["n_valid"] == overall["n"] == 24 and overall["acc"] == 1.0
    )  # the first answer, not the next
    assert results["source"]["setting"] == setting
    assert f"replies read as setting `{setting}`'s" in (tmp_path / "s" / "report.md").read_text("utf-8")


@pytest.mark.parametrize("protocol", ["sobaco", None])
def test_cot_j_replies_without_their_setting_are_refused(
    kinds_build: Path, tmp_path: Path, protocol: str | None
) -> None:
    """The one-number reading would count them out of choice (strict) or read the next example's
    answer (lenient): score cannot tell which setting asked them, and says so."""
    path = _replies(kinds_build, tmp_path, COT_J_RUNNING_ON if protocol is None else COT_J)
    assert _codes(path, tmp_path / "s", prediction_field="response", protocol=protocol) == ["EV065"]


def test_one_number_replies_need_no_setting_and_are_read_strictly(kinds_build: Path, tmp_path: Path) -> None:
    for reply, valid in (("{gold}", 24), ("{gold}です", 0), ("回答: {gold}です", 0)):
        path = _replies(kinds_build, tmp_path, reply)
        results = _score(path, tmp_path / "s", prediction_field="response", protocol="sobaco")
        assert results["metrics"]["overall"]["n_valid"] == valid, reply
        path.unlink()
        (tmp_path / "s").rename(tmp_path / f"done-{valid}-{len(reply)}")
    # the same replies read as one-number replies by choice: the answer after the marker is out of choice
    path = _replies(kinds_build, tmp_path, COT_J)
    results = _score(path, tmp_path / "s", prediction_field="response", protocol="sobaco", setting="basic-2")
    assert results["metrics"]["overall"]["n_valid"] == 0


def test_a_setting_score_does_not_know_is_refused(kinds_build: Path, tmp_path: Path) -> None:
    path = _replies(kinds_build, tmp_path, "{gold}")
    assert _codes(path, tmp_path / "s", prediction_field="response", setting="cot") == ["EV021"]


def test_our_predictions_stand_for_the_papers_only_when_read_under_its_protocol(
    kinds_model: Path, kinds_build: Path, tmp_path: Path
) -> None:
    paper = tmp_path / "paper"
    results = _protocol_run(kinds_model, kinds_build, paper, setting="cot-j-2", limit=6, max_new_tokens=12)
    predictions = paper / "predictions.jsonl"
    assert _score(predictions, tmp_path / "s", protocol="sobaco")["metrics"] == results["metrics"]
    # predictions that do not say they were read under the protocol (written before they said) cannot
    # be told to be the paper's
    records = [json.loads(line) for line in predictions.read_text("utf-8").splitlines()]
    assert records and all(record["protocol"] == "sobaco" for record in records)
    older = tmp_path / "older.jsonl"
    older.write_text(
        "".join(json.dumps({k: v for k, v in r.items() if k != "protocol"}) + "\n" for r in records)
    )
    assert _codes(older, tmp_path / "s2", protocol="sobaco") == ["EV066"]
    # --setting names the setting the predictions were asked with: their run.json's is accepted, another
    # one is refused (EV067)
    assert _codes(predictions, tmp_path / "s3", protocol="sobaco", setting="cot-j-1") == ["EV067"]
    named = _score(predictions, tmp_path / "s4", protocol="sobaco", setting="cot-j-2")
    assert named["metrics"] == results["metrics"] and named["source"]["setting"] == "cot-j-2"


def test_predictions_made_without_the_protocol_are_refused_under_it(
    kinds_model: Path, kinds_build: Path, tmp_path: Path
) -> None:
    """Decoded with jbcompile's limits and read leniently: not the paper's numbers, whatever the table
    would be headed; scored without the protocol, they are what their run read."""
    from jbcompile.evaluate.kind import EvalOptions
    from jbcompile.evaluate.requests import EvalRequest
    from jbcompile.evaluate.run import run_eval

    run = tmp_path / "run"
    request = EvalRequest(
        model=str(kinds_model),
        dataset=str(kinds_build),
        config="sobaco",
        out=run,
        options=EvalOptions(setting="basic-1", scoring="generate", shots=0),
        bootstrap=0,
        limit=6,
        max_new_tokens=2,
    )
    made = run_eval(request)
    assert made is not None
    predictions = run / "predictions.jsonl"
    assert _codes(predictions, tmp_path / "s", protocol="sobaco") == ["EV066"]
    assert _score(predictions, tmp_path / "plain")["metrics"] == made.results.to_json()["metrics"]


@pytest.mark.parametrize(
    ("responses", "setting", "protocol", "valid"),
    [
        ([[-2.0, False], [-0.5, False], [-3.0, False]], None, None, 24),  # multiple_choice: the argmax
        (["{gold}"], None, "sobaco", 24),  # generate_until: the reply, read strictly
        ([COT_J], "cot-j-1", "sobaco", 24),  # …and a cot-j reply after its marker
    ],
)
def test_an_lm_eval_log_of_sobaco_rows_is_read_as_sobaco(
    kinds_build: Path,
    tmp_path: Path,
    responses: list,
    setting: str | None,
    protocol: str | None,
    valid: int,
) -> None:
    """A sobaco row has ans2 as a bbq row does: its lm-eval samples are the generic lm-eval format, told
    sobaco by the row's columns (they were taken for lm-evaluation-harness's bbq task and refused)."""
    path = tmp_path / "samples_sobaco.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for index, row in enumerate(load_rows(str(kinds_build), "sobaco").rows[:24]):
            filtered = [r.format(gold=row["label"]) if isinstance(r, str) else r for r in responses]
            sample = {"doc_id": index, "doc": row, "arguments": [], "filtered_resps": filtered}
            handle.write(json.dumps(sample, ensure_ascii=False) + "\n")
    results = _score(path, tmp_path / "s", protocol=protocol, setting=setting)
    assert results["kind"] == "sobaco" and results["source"]["format"] == "lm-eval"
    assert results["metrics"]["overall"]["n_valid"] == valid


def _replies_naming(build: Path, folder: Path, reply: str, rows: int = 24) -> Path:
    """As :func:`_replies`, with ``{gold_text}`` (the gold option's text, a name with さん where it is a
    person) and ``{other_text}`` (the next option's text, likewise)."""
    path = folder / "replies.jsonl"

    def named(row: dict, index: int) -> str:
        text = row[f"ans{index}"]
        return f"{text}さん" if row["answer_info"][f"ans{index}"][1] != "unknown" else text

    with path.open("w", encoding="utf-8") as handle:
        for row in load_rows(str(build), "sobaco").rows[:rows]:
            gold, other = row["label"], (row["label"] + 1) % 3
            text = reply.format(
                gold=gold, other=other, gold_text=named(row, gold), other_text=named(row, other)
            )
            handle.write(json.dumps({**row, "response": text}, ensure_ascii=False) + "\n")
    return path


@pytest.mark.parametrize("protocol", ["sobaco", None])
@pytest.mark.parametrize(
    ("reply", "valid"),
    [
        ("正しい理由: …\n「回答」: {gold}", True),  # the marker in the prompt's brackets, its colon outside
        ("正しい理由: …\n【回答】{gold}", True),
        ("正しい理由: …\n回答: {gold}（{gold_text}）", True),  # the label glossed with its own option
        ("正しい理由: …\n回答: {gold_text}", True),  # the option's text (a name with its honorific)
        ("正しい理由: …\n回答: {other}（{gold_text}）", False),  # glossed with another option: which?
    ],
)
def test_cot_j_answers_as_a_paper_following_model_writes_them(
    kinds_build: Path, tmp_path: Path, protocol: str | None, reply: str, valid: bool
) -> None:
    path = _replies_naming(kinds_build, tmp_path, reply)
    results = _score(path, tmp_path / "s", prediction_field="response", protocol=protocol, setting="cot-j-1")
    overall = results["metrics"]["overall"]
    assert overall["n"] == 24
    if valid:
        assert overall["n_valid"] == 24 and overall["acc"] == 1.0
    else:
        assert overall["n_valid"] == 0


@pytest.mark.parametrize("setting", ["basic-1", "cot-j-1"])
def test_a_reply_holding_only_the_end_of_its_think_block_is_read_after_it(
    kinds_build: Path, tmp_path: Path, setting: str
) -> None:
    """A reasoning model whose chat template opened ``<think>`` in the prompt: its reply holds the block's
    end alone, then the answer — read under the paper's protocol as without it."""
    answer = "{gold}" if setting == "basic-1" else "回答: {gold}"
    path = _replies(
        kinds_build, tmp_path, "まず二人の違いを比べる。回答: {other} かもしれない。\n</think>\n\n" + answer
    )
    results = _score(path, tmp_path / "s", prediction_field="response", protocol="sobaco", setting=setting)
    overall = results["metrics"]["overall"]
    assert overall["n_valid"] == overall["n"] == 24 and overall["acc"] == 1.0
