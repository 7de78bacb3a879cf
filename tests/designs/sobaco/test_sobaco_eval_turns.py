"""Two-turn sobaco prompts (cot-r, cot-e) end to end with a tiny random model, offline."""

from __future__ import annotations

import pytest
from jbcompile.designs.sobaco import evaluate as sobaco
from jbcompile.designs.sobaco.evaluate import SOBACO
from jbcompile.evaluate.conversation import TurnItem, conversation_texts
from jbcompile.evaluate.kind import EvalOptions
from jbcompile.evaluate.promptfiles import load_prompt_template

from tests.designs.conftest import KINDS_SOURCES
from tests.helpers import compile_folder

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    """Twelve sobaco rows: the bias and culture rows of two questions' first option orders."""
    all_rows = compile_folder(KINDS_SOURCES).configs["sobaco"].rows
    return [r for r in all_rows if r["template_id"] == "age-plain"][:12]


@pytest.fixture(scope="module")
def backend(kinds_model):
    from jbcompile.evaluate.backends import BackendConfig, TransformersBackend

    return TransformersBackend(BackendConfig(model=str(kinds_model), batch_size=6, prefix_cache=True))


@pytest.fixture(autouse=True)
def short_first_turns(monkeypatch: pytest.MonkeyPatch) -> None:
    """First replies of a random model are noise: a few tokens test the same plumbing as a hundred."""
    monkeypatch.setattr(sobaco, "TWO_TURN", {"cot-e": 8, "cot-r": 4})


def _run(
    backend, rows: list[dict], setting: str, *, chat: bool, scoring: str
) -> tuple[list, list[str], list]:
    options = EvalOptions(setting=setting, chat=chat, scoring=scoring, shots=0)
    assert SOBACO.check_options(options) == [] or setting.startswith(("cot-e", "cot-r"))
    prepared = SOBACO.prepare(rows, options, load_prompt_template("sobaco", setting))
    texts = SOBACO.prompt_texts(prepared.items, backend, options, prepared)
    encoded = backend.encode(texts, chat=chat)
    keys = [item.prefix_keys for item in prepared.items]
    records = []
    if scoring == "logprob":
        label_ids = backend.label_token_ids(SOBACO.option_labels, texts[0], chat=chat)
        for item, logprobs in zip(prepared.items, backend.score(encoded, keys, label_ids), strict=True):
            record = dict(prepared.records[item.example_id])
            record["pred"] = max(range(3), key=lambda j: (logprobs[j], -j))
            records.append(record)
    else:
        outputs = backend.generate(encoded, keys, SOBACO.max_new_tokens(options), ("###",))
        for item, output in zip(prepared.items, outputs, strict=True):
            record = dict(prepared.records[item.example_id])
            record["pred"] = SOBACO.read_answer(output, item, record, options).pred
            records.append(record)
    return prepared.items, texts, records


def test_cot_r_runs_the_first_turn_then_scores_the_refined_answer(backend, rows: list[dict]) -> None:
    items, texts, records = _run(backend, rows, "cot-r-1", chat=False, scoring="logprob")
    assert all(isinstance(item, TurnItem) for item in items)
    for item, text, record in zip(items, texts, records, strict=True):
        assert text.startswith(item.first)  # turn 1: the basic prompt
        assert text.endswith(item.text) and "もう一度答えてください" in item.text  # turn 2: refine
        reply = text[len(item.first) : len(text) - len(item.text)]
        assert reply == record["first_output"].strip() + "\n\n"
        assert record["pred"] in (0, 1, 2)
    # the same prompts give the same conversation (greedy first turns)
    again, _ = conversation_texts(items, backend, chat=False)
    assert again == texts
    metrics = SOBACO.metrics(records)["overall"]
    assert metrics["n"] == 12 and metrics["n_valid"] == 12
    assert metrics["bias_score"] is not None and metrics["culture_acc"] is not None
    parsed = [r for r in records if r["first_pred"] is not None]
    expected = sum(r["pred"] != r["first_pred"] for r in parsed) / len(parsed) if parsed else None
    assert metrics["changed_after_first_turn"] == pytest.approx(expected)


def test_cot_e_in_chat_form_keeps_both_turns_in_the_template(backend, rows: list[dict]) -> None:
    items, texts, records = _run(backend, rows[:6], "cot-e-2", chat=True, scoring="generate")
    for item, text, record in zip(items, texts, records, strict=True):
        assert "ステレオタイプの選択肢" in item.first and "ステレオタイプの選択肢" not in item.text
        expected = (
            f"<|user|>\n{item.first}\n<|assistant|>\n{record['first_output'].strip()}\n"
            f"<|user|>\n{item.text}\n<|assistant|>\n"
        )
        assert text == expected
        assert record["pred"] in (0, 1, 2, None)
    assert SOBACO.metrics(records)["overall"]["n"] == 6


def test_a_two_turn_resume_reuses_the_first_replies_in_the_log(
    kinds_model, kinds_build, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every row done: no first turn is run and the model is not loaded. Some rows missing: only their
    first turns are run, and the predictions are those of an uninterrupted run."""
    import json

    from jbcompile.evaluate import conversation
    from jbcompile.evaluate.backends import TransformersBackend
    from jbcompile.evaluate.requests import EvalRequest
    from jbcompile.evaluate.run import run_eval

    def run() -> dict:
        options = EvalOptions(setting="cot-r-1", shots=0, scoring="logprob")
        request = EvalRequest(model=str(kinds_model), dataset=str(kinds_build), config="sobaco",
                              out=tmp_path / "run", options=options, bootstrap=20, limit=12)  # fmt: skip
        return run_eval(request).results.to_json()

    first = run()
    log = tmp_path / "run" / "predictions.jsonl"
    written = log.read_text(encoding="utf-8")
    first_turns: list[int] = []
    real_first_replies = conversation.first_replies
    monkeypatch.setattr(
        conversation,
        "first_replies",
        lambda backend, items, *, chat: (
            first_turns.append(len(items)) or real_first_replies(backend, items, chat=chat)
        ),
    )
    built: list[str] = []
    real_init = TransformersBackend.__init__
    monkeypatch.setattr(
        TransformersBackend,
        "__init__",
        lambda self, config: built.append(config.model) or real_init(self, config),
    )
    assert run()["metrics"] == first["metrics"]
    assert built == [] and sum(first_turns) == 0
    log.write_text("".join(written.splitlines(keepends=True)[:-4]), encoding="utf-8")
    assert run()["metrics"] == first["metrics"]
    assert built == [str(kinds_model)] and sum(first_turns) == 4
    again = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    before = [json.loads(line) for line in written.splitlines()]
    assert [(r["example_id"], r["first_output"], r["pred"]) for r in again] == [
        (r["example_id"], r["first_output"], r["pred"]) for r in before
    ]
