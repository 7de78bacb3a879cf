"""The sobaco prompt settings, ``<method>-<wording>``: what the evaluator, the protocol and the summary
over runs share (below all three, so that none imports another for them)."""

from __future__ import annotations

METHODS = ("basic", "debias", "cot-j", "cot-e", "cot-r")
WORDINGS = (1, 2, 3)
SETTINGS = tuple(f"{method}-{wording}" for method in METHODS for wording in WORDINGS)
PROTOCOL_NAME = "sobaco"  # the paper's protocol, under which the evaluator decodes and reads as the paper


def split_setting(setting: str | None) -> tuple[str, int] | None:
    """``"cot-e-2"`` → ``("cot-e", 2)``; None for a name that is not a bundled setting (or none)."""
    method, _, wording = (setting or "").rpartition("-")
    if method in METHODS and wording.isdigit() and int(wording) in WORDINGS:
        return method, int(wording)
    return None
