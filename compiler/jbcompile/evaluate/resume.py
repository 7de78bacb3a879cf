"""A run's identity (run.json): what must match for a run folder to be resumed, and the refusal when it
does not (EV007, naming the settings that differ).

run.json names a prompt file by what identifies it, not where it lies, and a local model folder by its
files' sizes and sampled digests, so that moving the package or saving new weights into the same folder
are told apart correctly (docs/eval.md, "Resume").
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..diagnostics import Diagnostic, DiagnosticError
from .promptfiles import bundled_prompt_name
from .requests import EvalRequest, looks_like_path

DECODING = "decoding"  # run.json's record of the limits a run's replies had (not compared by a resume)
_SAMPLES_PER_FILE = 16  # evenly spaced pieces of each model file, 64 KiB each
_SAMPLE_BYTES = 64 * 1024


def fingerprint(
    request: EvalRequest,
    template_sha: str,
    backend_options: Any,
    data: str | None = None,
    stop_strings: Sequence[str] | None = None,
) -> dict[str, Any]:
    """run.json: the settings a resume must share (not the speed settings), ``backend_options`` being
    the backend's own, checked options, and ``data`` what names the rows read (their content's sha256,
    or a Hub commit): a resume never mixes predictions made on rows that have changed since."""
    from ..redaction import redact_url

    options = asdict(request.options)
    for name in ("protocol", "answer_pattern"):  # runs started before these existed still resume
        if options.get(name) is None:
            options.pop(name, None)
    options.pop("thinking", None)  # recorded once, as the run's ``thinking``
    options["prompt_file"] = prompt_name(request.options.prompt_file)
    return {
        "model": request.model,
        "model_revision": request.model_revision,
        "model_files": model_files(request.model),
        "dataset": request.dataset,
        "config": request.config,
        "revision": request.revision,
        "data": data,
        "options": options,
        "template_sha256": template_sha,
        "max_new_tokens": request.max_new_tokens,
        "dtype": request.dtype,
        "limit": request.limit,
        # only when given: a run folder from before --sample existed resumes as it did
        **({"sample": request.sample} if request.sample is not None else {}),
        "backend": request.backend,
        # the same keys for every backend, so that run.json reads the same whichever ran
        "base_url": redact_url(getattr(backend_options, "base_url", None)),
        "sampling": asdict(request.backend_options.sampling),
        "thinking": request.thinking,
        "thinking_budget": getattr(backend_options, "thinking_budget", None),
        # where generation stopped besides its limit, as the kind decided it: another version of the
        # package that stops elsewhere does not add its replies to these
        **({"stop_strings": list(stop_strings)} if stop_strings is not None else {}),
    }


def model_files(model: str) -> dict[str, str] | None:
    """A local model folder's files, each by its size and a digest of 16 pieces of it: weights saved
    again into the same folder (new training, another seed) stop a resume, which would otherwise give
    the old predictions; reading about 1 MiB a file keeps this cheap for a 70B checkpoint. None for a
    Hub id (its revision is the ``model_revision`` setting)."""
    folder = Path(model).expanduser()
    if not looks_like_path(model) or not folder.is_dir():
        return None
    found = {}
    for path in sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith(".")):
        size = path.stat().st_size
        digest = hashlib.sha256(str(size).encode())
        with path.open("rb") as handle:
            for piece in range(_SAMPLES_PER_FILE):
                handle.seek(max(0, size - _SAMPLE_BYTES) * piece // max(1, _SAMPLES_PER_FILE - 1))
                digest.update(handle.read(_SAMPLE_BYTES))
        found[path.name] = digest.hexdigest()[:16]
    return found


def prompt_name(prompt_file: Path | None) -> str | None:
    """How run.json names a prompt file: a bundled one by its place under ``prompts/``
    (``release/verbatim.j2``), a user's by its file name — its content is ``template_sha256`` — and
    never by a path, so that reinstalling or moving the package (or the file) does not stop a resume."""
    if prompt_file is None:
        return None
    return bundled_prompt_name(Path(prompt_file)) or Path(prompt_file).resolve().name


def _resume_key(settings: dict[str, Any]) -> dict[str, Any]:
    """run.json's settings as a resume compares them: the prompt file by its file name alone (0.2.0
    wrote a path there, for a release's own prompt the package's install path); its content is compared
    as ``template_sha256``."""
    options = settings.get("options")
    if isinstance(options, dict) and isinstance(options.get("prompt_file"), str):
        name = re.split(r"[\\/]", options["prompt_file"])[-1]
        settings = {**settings, "options": {**options, "prompt_file": name}}
    return settings


def settings_differ(stored: Any, current: dict[str, Any]) -> list[str]:
    """The settings of run.json that this request does not share, as ``name: there → here``."""
    if not isinstance(stored, dict):
        return ["run.json does not hold a run's settings"]
    there, here = _resume_key(stored), _resume_key(current)
    # what the run generated under is recorded for the reader; the settings compared here decide it
    there, here = ({k: v for k, v in side.items() if k != DECODING} for side in (there, here))
    # a run started before 0.3.1 did not record them
    for recorded_since_031 in ("model_files", "data", "stop_strings"):
        if recorded_since_031 not in there:
            here = {key: value for key, value in here.items() if key != recorded_since_031}
    pairs = [(key, there.get(key), here.get(key)) for key in dict.fromkeys([*here, *there])]
    if isinstance(there.get("options"), dict) and isinstance(here.get("options"), dict):
        pairs = [pair for pair in pairs if pair[0] != "options"] + [
            (f"options.{key}", there["options"].get(key), here["options"].get(key))
            for key in dict.fromkeys([*here["options"], *there["options"]])
        ]
    return [
        f"{name}: {_shown(old)} → {_shown(new)}"
        for name, old, new in pairs
        if old != new and not (name in LOCAL_PATHS and same_place(old, new))
    ]


# the settings that may name a local path (a build folder, a release file, a model folder): spelled
# otherwise (``build``, ``./build``, its absolute path), they name the same setting; their content is
# compared on its own (``data``, ``model_files``)
LOCAL_PATHS = ("dataset", "model")


def same_place(there: Any, here: Any) -> bool:
    """Whether two spellings of a setting name the same local file or folder, as this process resolves
    them (a relative path from the working directory, as the run reads it). A Hub id is a name, compared
    as text; so is a path that is not there (nothing tells it from a Hub id)."""
    if not (isinstance(there, str) and isinstance(here, str)):
        return False
    places = [Path(value).expanduser() for value in (there, here)]
    if not all(place.exists() for place in places):
        return False
    try:
        return places[0].resolve() == places[1].resolve()
    except (OSError, RuntimeError):  # a loop of links: not known to be the same
        return False


def _shown(value: Any, most: int = 40) -> str:
    """A setting's value in a message: as JSON, a long string shortened in its middle (its quotes kept)."""
    from ..text import shortened

    if isinstance(value, str):
        return json.dumps(shortened(value, most), ensure_ascii=False)
    return shortened(json.dumps(value, ensure_ascii=False), most)


def conflict(run_path: Path, current: dict[str, Any]) -> list[str]:
    """How the run held at ``run_path`` differs from ``current`` (nothing when there is none)."""
    if not run_path.is_file():
        return []
    from .. import reading
    from ..jsonl import read_json

    try:
        return settings_differ(read_json(run_path, reading.RECORD), current)
    except ValueError:
        return ["run.json is not JSON"]


def refuse_other_settings(run_path: Path, differences: list[str]) -> None:
    """EV007: the folder holds a run with other settings."""
    if not differences:
        return
    raise DiagnosticError(
        [
            Diagnostic(
                "EV007",
                "this output folder holds a run with other settings ("
                + "; ".join(differences[:4] + (["…"] if len(differences) > 4 else []))
                + ")",
                path=str(run_path),
                hint="run it with that folder's settings to resume it, choose another --out, or add "
                "--overwrite to start over",
            )
        ]
    )
