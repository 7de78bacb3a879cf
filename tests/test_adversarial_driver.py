"""The judge of benchmarks/adversarial.py (the adversarial run is not part of the suite: minutes): its
checks must catch what they are there to catch, or the run's counts mean nothing."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "adversarial.py"


def _driver():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("adversarial", BENCH)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("adversarial", module)
    spec.loader.exec_module(module)
    return module


def test_a_bad_input_must_end_non_zero_coded_and_without_traceback() -> None:
    a = _driver()
    assert a.refused(a.Outcome(2, "x.yaml:1:1: F002 a FIFO — give a regular file")) == []
    assert a.refused(a.Outcome(0, "built")), "exit 0 on a bad input passed"
    assert a.refused(a.Outcome(2, "something went wrong")), "an uncoded failure passed"
    assert a.refused(a.Outcome(1, "Traceback (most recent call last):\nKeyError: 'x'\nF002")), "a traceback"
    assert a.refused(a.Outcome(-1, "", timed_out=True)), "a hang passed"
    assert a.refused(a.Outcome(2, "F001 too large"), "F002"), "the wrong code passed"


def test_secrets_are_found_in_every_form_and_stray_files_by_name(tmp_path: Path) -> None:
    a = _driver()
    assert a.leaked(f"denied: Basic {a.SECRETS[2]}") and a.leaked(f"key {a.KEY}")
    (tmp_path / "run.json").write_text(f'{{"url": "http://alice:{a.PASSWORD}@h"}}', encoding="utf-8")
    assert a.leaked("", tmp_path)
    (tmp_path / ".out.jbcompile-1234.tmp").write_text("", encoding="utf-8")
    assert a.strays(tmp_path) == [str(tmp_path / ".out.jbcompile-1234.tmp")]


def test_every_class_of_the_issue_has_cases() -> None:
    a = _driver()
    cases = a.all_cases(23)
    tried = {case.cls for case in cases}
    assert tried == set(a.CLASSES) and len(cases) >= 100
