"""A protocol's reading holds whatever file `score` is given (issue 25 §1): a harness that recorded its own
answer — an inspect scorer's letter, an lm-eval filter's label, the JUBAKU-v2 script's regex — has its
reply read again by the protocol's reading; an answer chosen by log-likelihood, with no reply, is
refused under a protocol whose paper generated; a log whose prompt labelled the options otherwise
than the kind reads them is refused rather than read as all out of choice."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jbcompile.cli import app
from typer.testing import CliRunner

from tests.designs import conftest as designs
from tests.eval.test_eval_formats import (
    bbq_release,
    jubaku_release,
    lm_eval_samples,
    script_output,
    write_jsonl,
)

LETTERS = "ABC"


@pytest.fixture(scope="module")
def sobaco_rows(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    from jbcompile.evaluate.dataset import load_rows

    build = designs.kinds_build.__wrapped__(tmp_path_factory)
    return load_rows(str(build), "sobaco").rows[:24]


def score(path: Path, out: Path, *extra: str) -> tuple[int, str, dict[str, Any] | None]:
    result = CliRunner().invoke(app, ["score", str(path), "--out", str(out), "--bootstrap", "0", *extra])
    assert "Traceback" not in result.output
    folder = out / "results.json"
    return result.exit_code, result.output, json.loads(folder.read_text("utf-8")) if folder.exists() else None


def numbered(row: dict) -> str:
    """A prompt that shows the options as the kinds read them (0, 1, 2)."""
    options = "\n".join(f"{i}. {row[f'ans{i}']}" for i in range(3))
    return f"{row['context']}\n{row['question']}\n{options}\n### 回答\n"


def lettered(row: dict) -> str:
    """The prompt inspect's multiple_choice() writes: lettered options, 'ANSWER: $LETTER'."""
    options = "\n".join(f"{LETTERS[i]}) {row[f'ans{i}']}" for i in range(3))
    return f"Answer with 'ANSWER: $LETTER' where LETTER is one of A,B,C.\n\n{row['question']}\n\n{options}"


def inspect_log(path: Path, rows: list[dict], reply, prompt=numbered) -> Path:  # type: ignore[no-untyped-def]
    """An inspect JSON log: each sample's scorer recorded the gold's letter as its answer, whatever the
    reply (``reply(row)``) said — the harness's own reading, which a protocol's reading replaces."""
    samples = [
        {
            "id": row["example_id"],
            "epoch": 1,
            "input": row["question"],
            "messages": [
                {"role": "user", "content": prompt(row)},
                {"role": "assistant", "content": reply(row)},
            ],
            "output": {"choices": [{"message": {"role": "assistant", "content": reply(row)}}]},
            "scores": {"choice": {"value": "C", "answer": LETTERS[row["label"]]}},
            "metadata": row,
        }
        for row in rows
    ]
    path.write_text(json.dumps({"version": 2, "samples": samples}, ensure_ascii=False), encoding="utf-8")
    return path


SHAPES = ("{gold}", "{gold}です", "答え：{gold}")  # an option alone; two a person reads as the gold


def shaped(row: dict) -> str:
    index = int(str(row["example_id"]).encode().hex(), 16) % len(SHAPES)
    return SHAPES[index].format(gold=row["label"])


def test_an_inspect_log_under_the_sobaco_protocol_is_read_strictly(
    sobaco_rows: list[dict], tmp_path: Path
) -> None:
    """The scorer's letter names the gold for every row; the strict reading counts only replies that are
    one option and nothing else, and leaves the others out of the denominators."""
    path = inspect_log(tmp_path / "log.json", sobaco_rows, shaped)
    strict = sum(shaped(row) == str(row["label"]) for row in sobaco_rows)
    assert 0 < strict < len(sobaco_rows)
    code, output, results = score(path, tmp_path / "paper", "--protocol", "sobaco")
    assert code == 0 and results is not None, output
    overall = results["metrics"]["overall"]
    assert (overall["n"], overall["n_valid"], overall["acc"]) == (len(sobaco_rows), strict, 1.0)
    code, output, results = score(path, tmp_path / "own")  # no reading asked for: the scorer's letters
    assert code == 0 and results is not None, output
    assert results["metrics"]["overall"]["n_valid"] == len(sobaco_rows)


def test_a_setting_reads_an_inspect_reply_as_that_setting_does(
    sobaco_rows: list[dict], tmp_path: Path
) -> None:
    """cot-j's answer follows its marker: --setting cot-j-1 reads the reply, not the scorer's letter."""
    path = inspect_log(
        tmp_path / "log.json", sobaco_rows, lambda row: f"根拠: …\n最終回答: {(row['label'] + 1) % 3}"
    )
    code, output, results = score(path, tmp_path / "s", "--setting", "cot-j-1")
    assert code == 0 and results is not None, output
    assert results["metrics"]["overall"]["acc"] == 0.0  # the reply's answer, one off the gold's letter


def test_a_lettered_prompt_is_refused_under_a_protocol_that_reads_numbers(
    sobaco_rows: list[dict], tmp_path: Path
) -> None:
    """inspect's multiple_choice() letters the options; read by the sobaco labels, every 'ANSWER: B' would
    be out of choice (exit 0, wrong numbers): refused with what to do."""
    path = inspect_log(
        tmp_path / "log.json", sobaco_rows, lambda row: f"ANSWER: {LETTERS[row['label']]}", lettered
    )
    code, output, results = score(path, tmp_path / "s", "--protocol", "sobaco")
    assert code == 2 and "EV068" in output and "A, B, C" in output and results is None, output
    assert not (tmp_path / "s").exists()


def test_an_lm_eval_reply_is_read_before_its_filter(sobaco_rows: list[dict], tmp_path: Path) -> None:
    """A generate_until sample's filter kept the first label ('1' of '1です'); the protocol reads the reply
    the model wrote (resps), strictly: out of choice."""
    samples = [
        {
            "doc_id": index,
            "doc": row,
            "arguments": {"gen_args_0": {"arg_0": numbered(row), "arg_1": {"until": ["\n\n"]}}},
            "resps": [[f"{row['label']}です"]],
            "filtered_resps": [str(row["label"])],
        }
        for index, row in enumerate(sobaco_rows)
    ]
    path = write_jsonl(tmp_path / "samples_sobaco_gen.jsonl", samples)
    code, output, results = score(path, tmp_path / "paper", "--protocol", "sobaco")
    assert code == 0 and results is not None, output
    assert results["metrics"]["overall"]["n_valid"] == 0
    code, output, results = score(path, tmp_path / "own")
    assert code == 0 and results is not None, output
    assert results["metrics"]["overall"]["n_valid"] == len(sobaco_rows)


def test_log_likelihood_answers_are_refused_under_a_protocol_that_generated(tmp_path: Path) -> None:
    """lm-evaluation-harness's bbq multiple_choice samples hold no reply: under --protocol jbbq (whose
    paper generated, out-of-choice answers and all) they are refused, as our own log-probability
    predictions are; without the protocol they score as before."""
    samples = lm_eval_samples(bbq_release(), lambda row: row["label"])
    path = write_jsonl(tmp_path / "samples_bbq.jsonl", samples)
    code, output, results = score(path, tmp_path / "paper", "--protocol", "jbbq")
    assert code == 2 and "EV066" in output and "log-likelihood" in output and results is None, output
    code, output, results = score(path, tmp_path / "own")
    assert code == 0 and results is not None, output


def test_the_jubaku_script_output_under_the_protocol(tmp_path: Path) -> None:
    """Under --protocol jubaku the reply (generated_text) is read again, as the paper's script reads it
    and as `eval --protocol jubaku` does — not taken from the file's model_ans (here set wrong on
    purpose): the last A or B standing alone, else a first line naming one; `AではなくB` names neither
    alone and is no answer. Its likelihood mode, with no reply, is refused."""
    entries = []
    for index, row in enumerate(jubaku_release()):
        gold = row["correct_answer"].upper()
        other = "A" if gold == "B" else "B"
        reply = f"答えは{gold}です" if index % 2 == 0 else f"{other}ではなく{gold}"
        entries.append(dict(row, model_ans="a", generated_text=reply))
    path = script_output(tmp_path / "generated.json", entries)
    code, output, results = score(path, tmp_path / "paper", "--protocol", "jubaku")
    assert code == 0 and results is not None, output
    overall = results["metrics"]["overall"]
    assert (overall["n_valid"], overall["n_invalid"], overall["acc"]) == (
        (len(entries) + 1) // 2,
        len(entries) // 2,
        1.0,
    )
    code, output, results = score(path, tmp_path / "own")
    assert code == 0 and results is not None, output
    assert results["metrics"]["overall"]["n_valid"] == len(entries)  # the file's own answers: all 'a'
    likely = [
        {k: v for k, v in e.items() if k != "generated_text"}
        | {"likelihood_scores": {"A": -0.1, "B": -2.0}, "best_candidate": "A", "model_ans": "a"}
        for e in entries
    ]
    code, output, results = score(
        script_output(tmp_path / "likely.json", likely), tmp_path / "l", "--protocol", "jubaku"
    )
    assert code == 2 and "EV066" in output and results is None, output


def test_a_setting_has_nothing_to_read_in_log_likelihoods(tmp_path: Path) -> None:
    """--setting names how replies are read: a multiple_choice log has none, so the setting is refused
    rather than recorded as the reading of answers it never read."""
    path = write_jsonl(
        tmp_path / "samples_bbq.jsonl", lm_eval_samples(bbq_release(), lambda row: row["label"])
    )
    code, output, results = score(path, tmp_path / "s", "--setting", "cot")
    assert code == 2 and "EV067" in output and "log-likelihood" in output and results is None, output


def test_an_inspect_log_on_one_line_is_read(sobaco_rows: list[dict], tmp_path: Path) -> None:
    """json.dumps writes an inspect JSON log on one line: its samples are the rows, not one row."""
    path = inspect_log(tmp_path / "log.json", sobaco_rows, lambda row: str(row["label"]))
    assert len(path.read_text("utf-8").splitlines()) == 1
    code, output, results = score(path, tmp_path / "s")
    assert code == 0 and results is not None, output
    assert results["source"]["format"] == "inspect" and results["metrics"]["overall"]["n"] == len(sobaco_rows)


def test_score_reads_after_the_answer_pattern_as_eval_does(sobaco_rows: list[dict], tmp_path: Path) -> None:
    """Replies of a prompt file that asked for reasons and then '答え:' (eval --answer-pattern): score
    reads them after the same pattern — strictly under the protocol — instead of from their start, where
    none is an option alone; a harness's own answer gives way to the pattern too."""
    rows = [dict(row, reply=f"根拠: 文脈から。\n答え: {row['label']}") for row in sobaco_rows]
    path = write_jsonl(tmp_path / "replies.jsonl", rows)
    common = ("--prediction-field", "reply", "--protocol", "sobaco")
    code, output, results = score(path, tmp_path / "start", *common)
    assert code == 0 and results is not None, output
    assert results["metrics"]["overall"]["n_valid"] == 0
    code, output, results = score(path, tmp_path / "after", *common, "--answer-pattern", "答え[:：]")
    assert code == 0 and results is not None, output
    overall = results["metrics"]["overall"]
    assert overall["n_valid"] == len(rows) and overall["acc"] == 1.0
    assert results["source"]["answer_pattern"] == "答え[:：]"
    assert "after the last match of `答え[:：]`" in (tmp_path / "after" / "report.md").read_text("utf-8")
    log = inspect_log(tmp_path / "log.json", sobaco_rows, lambda row: f"答え: {(row['label'] + 1) % 3}")
    code, output, results = score(log, tmp_path / "log", "--answer-pattern", "答え[:：]")
    assert code == 0 and results is not None, output
    assert results["metrics"]["overall"]["acc"] == 0.0  # the reply's answer, not the scorer's letter


@pytest.mark.parametrize("pattern", ["", "(答え)?"])
def test_a_pattern_that_matches_an_empty_reply_is_refused_by_score(
    sobaco_rows: list[dict], tmp_path: Path, pattern: str
) -> None:
    path = write_jsonl(tmp_path / "replies.jsonl", [dict(row, reply="1") for row in sobaco_rows])
    code, output, results = score(
        path, tmp_path / "s", "--prediction-field", "reply", "--answer-pattern", pattern
    )
    assert code == 2 and "EV028" in output and results is None, output


def test_our_predictions_carry_their_answers(sobaco_rows: list[dict], tmp_path: Path) -> None:
    """An answer pattern says how to read replies; our predictions carry the answers their run read."""
    from jbcompile.designs.sobaco.evaluate import SOBACO

    records = [dict(SOBACO.base_record(row, "qa"), pred=row["label"], raw_output="x") for row in sobaco_rows]
    path = write_jsonl(tmp_path / "predictions.jsonl", records)
    code, output, results = score(path, tmp_path / "s", "--answer-pattern", "答え[:：]")
    assert code == 2 and "EV067" in output and "--answer-pattern" in output and results is None, output
