"""report.md's note on answers outside the options names the metric variants the run has, no others."""

from __future__ import annotations

from jbcompile.evaluate.report import variant_notes


def test_the_note_names_only_the_suffix_the_metrics_carry() -> None:
    counted_wrong_by_default = "\n".join(variant_notes({"acc": 0.5, "acc_valid": 0.8, "n": 10}))
    assert "`acc` 0.500 vs `acc_valid` 0.800" in counted_wrong_by_default
    assert "`…_valid`: such replies left out" in counted_wrong_by_default
    assert "_all" not in counted_wrong_by_default
    left_out_by_default = "\n".join(variant_notes({"acc": 0.8, "acc_all": 0.5}))
    assert "`…_all`: such replies counted as wrong" in left_out_by_default
    assert "_valid" not in left_out_by_default


def test_no_note_when_the_variants_agree() -> None:
    assert variant_notes({"acc": 0.5, "acc_valid": 0.5, "acc_all": 0.5}) == []
