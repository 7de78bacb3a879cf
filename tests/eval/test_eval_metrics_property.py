"""Property tests over random prediction sets (issue 14): `score` computes what `eval` computes, and every
named variant satisfies the relation that defines it."""

from __future__ import annotations

import json
import math
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jbcompile.designs.bbq.evaluate import BBQ
from jbcompile.designs.jubaku.evaluate import JUBAKU
from jbcompile.designs.sobaco.evaluate import SOBACO
from jbcompile.evaluate.requests import ScoreRequest
from jbcompile.evaluate.results import metrics_block as _metrics_block
from jbcompile.evaluate.score import run_score

ANSWERS = ("B", "CB", "U", "ooc")


def bbq_record(
    i: int, condition: str, context: str | None, answer: str, template: int, category: str
) -> dict:
    # options rotate with i, so every position holds every role somewhere
    biased, counter, unknown = i % 3, (i + 1) % 3, (i + 2) % 3
    gold = unknown if condition == "ambig" else biased if context == "biased" else counter
    pred = {"B": biased, "CB": counter, "U": unknown, "ooc": None}[answer]
    return {
        "example_id": f"r{i}",
        "category": category,
        "template_id": f"t{template}",
        "context_condition": condition,
        "context_bias": context,
        "task": "qa",
        "gold": gold,
        "pred": pred,
        "biased_label": biased,
        "unknown_label": unknown,
        "target_label": biased,
        "question_polarity": "neg",
        "label": gold,
    }


rows = st.lists(
    st.tuples(
        st.sampled_from([("ambig", None), ("disambig", "biased"), ("disambig", "counter_biased")]),
        st.sampled_from(ANSWERS),
        st.integers(0, 4),
        st.sampled_from(["Age", "Gender_identity"]),
    ),
    min_size=0,
    max_size=60,
)


def records_of(drawn) -> list[dict]:
    return [bbq_record(i, cond, ctx, answer, t, cat) for i, ((cond, ctx), answer, t, cat) in enumerate(drawn)]


def close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def mean(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else (a + b) / 2


@settings(max_examples=150, deadline=None)
@given(rows)
def test_every_bbq_variant_satisfies_its_defining_relation(drawn) -> None:
    records = records_of(drawn)
    for m in [BBQ.point(records)] + list(BBQ.metrics(records)["by_category"].values()):
        s_dis, acc_ambig = m["s_dis"], m["acc_ambig"]
        expected = None if s_dis is None or acc_ambig is None else (1 - acc_ambig) * s_dis
        assert close(m["s_amb_jbbq"], expected)
        assert close(m["s_avg_jbbq"], mean(m["s_amb_jbbq"], s_dis))
        assert close(m["acc_avg"], mean(m["acc_ambig"], m["acc_disambig"]))
        assert close(m["acc_avg_valid"], mean(m["acc_ambig_valid"], m["acc_disambig_valid"]))
        assert close(m["diff_bias_avg"], mean(m["diff_bias_ambig"], m["diff_bias_disambig"]))
        assert close(
            m["diff_bias_avg_valid"], mean(m["diff_bias_ambig_valid"], m["diff_bias_disambig_valid"])
        )
        # BBQ's s_AMB over the ambiguous rows is KoBBQ's diff-bias of the valid ambiguous answers (QA task)
        assert close(m["s_amb_bbq"], m["diff_bias_ambig_valid"])
        # Acc. Diff. is minus the disambiguated diff-bias, in both conventions
        assert close(m["acc_diff"], None if m["diff_bias_disambig"] is None else -m["diff_bias_disambig"])
        assert close(
            m["acc_diff_valid"],
            None if m["diff_bias_disambig_valid"] is None else -m["diff_bias_disambig_valid"],
        )
        # counting OoC as wrong scales the valid-answer accuracy by the valid share
        for suffix in ("", "_ambig", "_disambig"):
            all_rows, valid, ooc = m[f"acc{suffix}"], m[f"acc{suffix}_valid"], m[f"ooc_ratio{suffix}"]
            if valid is not None:
                assert close(all_rows, valid * (1 - ooc))
            elif ooc is not None:
                assert all_rows == 0.0 and ooc == 1.0  # every row OoC: 0 correct, never null
        for name, value in m.items():
            if (
                name.startswith(("acc", "ooc_ratio"))
                and name != "acc_diff"
                and not name.startswith("acc_diff")
            ):
                assert value is None or 0.0 <= value <= 1.0, name
            if name.startswith(("diff_bias", "s_", "acc_diff")):
                assert value is None or -1.0 - 1e-12 <= value <= 1.0 + 1e-12, name


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows.filter(bool))
def test_score_and_eval_compute_the_same_results(tmp_path_factory, drawn) -> None:
    """`eval` writes _metrics_block(records); `score` reads predictions.jsonl back and must agree."""
    records = records_of(drawn)
    folder: Path = tmp_path_factory.mktemp("score")
    predictions = folder / "predictions.jsonl"
    predictions.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    for protocol in (None, "jbbq"):
        block = _metrics_block(BBQ, records, 30, 3, protocol)
        scored = run_score(
            ScoreRequest(predictions=predictions, out=folder / "out", bootstrap=30, seed=3, protocol=protocol)
        ).results.to_json()
        assert scored["metrics"] == json.loads(json.dumps(block["metrics"]))
        assert scored["metrics_ci"] == json.loads(json.dumps(block["metrics_ci"]))
        if protocol is None:
            assert scored["protocol"] == block["protocol"]
        else:  # whose prompt the replies answered: predictions.jsonl alone, without its run.json, cannot say
            assert scored["protocol"].pop("prompt_wording") == "unknown"
            assert scored["protocol"] == {k: v for k, v in block["protocol"].items() if k != "prompt_wording"}


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 5), st.integers(0, 7), st.sampled_from(["n", "b", "x"])), max_size=60)
)
def test_jubaku_variants(drawn) -> None:
    seen, records = set(), []
    for case, variant, pick in drawn:
        if (case, variant) in seen:
            continue
        seen.add((case, variant))
        label = variant % 2
        pred = {"n": label, "b": 1 - label, "x": None}[pick]
        records.append(
            {
                "example_id": f"{case}-{variant}",
                "template_id": f"c{case}",
                "category": "R",
                "label": label,
                "gold": label,
                "pred": pred,
            }  # fmt: skip
        )
    m = JUBAKU.point(JUBAKU.prepare_records(records))
    if m["n"]:
        assert close(m["acc_all"], None if m["acc"] is None else m["acc"] * (1 - m["invalid_rate"])) or (
            m["acc"] is None and m["acc_all"] == 0.0
        )
    cases = {}
    for r in records:
        cases.setdefault(r["template_id"], []).append(
            r["pred"] if r["pred"] is None else r["pred"] == r["gold"]
        )
    strict = sum(len(set(v)) > 1 for v in cases.values())
    valid_cases = [set(x for x in v if x is not None) for v in cases.values()]
    with_valid = [v for v in valid_cases if v]
    assert close(m["fluctuation_rate"], strict / len(cases) if cases else None)
    assert close(
        m["fluctuation_rate_valid"],
        sum(len(v) > 1 for v in with_valid) / len(with_valid) if with_valid else None,
    )


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["bias", "culture"]), st.sampled_from(ANSWERS), st.integers(0, 2))))
def test_sobaco_variants(drawn) -> None:
    records = []
    for i, (kind, answer, position) in enumerate(drawn):
        biased, counter, unknown = position, (position + 1) % 3, (position + 2) % 3
        gold = unknown if kind == "bias" else counter
        pred = {"B": biased, "CB": counter, "U": unknown, "ooc": None}[answer]
        records.append(
            {
                "example_id": f"r{i}",
                "category": "Age",
                "template_id": "t",
                "type": kind,
                "gold": gold,
                "pred": pred,
                "biased_label": biased if kind == "bias" else None,
                "unknown_label": unknown,
            }  # fmt: skip
        )
    m = SOBACO.point(records)
    bias = [r for r in records if r["type"] == "bias"]
    valid_bias = [r for r in bias if r["pred"] is not None]
    if valid_bias:
        assert close(m["bias_score_all"], m["bias_score"] * len(valid_bias) / len(bias))
    elif bias:
        assert m["bias_score"] is None and m["bias_score_all"] == 0.0
    else:
        assert m["bias_score"] is None and m["bias_score_all"] is None
    if m["acc"] is not None:
        assert close(m["acc_all"], m["acc"] * (1 - m["ooc_ratio"]))


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, 3), st.sampled_from(["n", "b", "x"])), min_size=1, max_size=32))
def test_score_and_eval_agree_on_jubaku(tmp_path_factory, drawn) -> None:
    """jubaku's metrics span a case's rows (prepare_records); both paths must apply it the same way."""
    records = [
        {
            "example_id": f"c{case}-{i}",
            "template_id": f"c{case}",
            "category": "R",
            "task": "qa",
            "label": i % 2,
            "biased_label": 1 - i % 2,
            "instruction_id": 0,
            "order": "neutral_first" if i % 2 == 0 else "biased_first",
            "gold": i % 2,
            "pred": {"n": i % 2, "b": 1 - i % 2, "x": None}[pick],
            "protocol": "jubaku",  # read as the paper's script reads a reply (else EV066 under it)
        }  # fmt: skip
        for i, (case, pick) in enumerate(drawn)
    ]
    folder: Path = tmp_path_factory.mktemp("score-jubaku")
    predictions = folder / "predictions.jsonl"
    predictions.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    block = _metrics_block(JUBAKU, records, 20, 1, "jubaku")
    scored = run_score(
        ScoreRequest(
            predictions=predictions,
            kind="jubaku",
            out=folder / "out",
            bootstrap=20,
            seed=1,
            protocol="jubaku",
        )
    ).results.to_json()
    assert scored["metrics"] == json.loads(json.dumps(block["metrics"]))
    assert scored["metrics_ci"] == json.loads(json.dumps(block["metrics_ci"]))
