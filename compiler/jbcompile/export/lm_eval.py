"""``jbcompile export lm-eval``: a task folder for lm-evaluation-harness (``lm_eval --include_path DIR``).

Per exportable config and prompt setting, two tasks: ``<dataset>_<config>_<setting>`` (``multiple_choice``:
the log-likelihood of each option label after jbcompile's prompt) and ``…_gen`` (``generate_until``: a
reply, read by jbcompile's own reader, :mod:`.reader`, through the filter in ``<kind>/reader.py``). A group
``<dataset>`` holds them all. Each design's tasks lie in a folder of their own (``<kind>/``) beside their
``utils.py``, which carries the prompts and metrics (:mod:`.runtime`); every metric is aggregated over the
whole task by jbcompile's formulas.
"""

from __future__ import annotations

from typing import Any

import yaml

from .. import reading
from ..evaluate.harness_logs import EXPORT_FILTER
from . import BuildExport, ExportConfig, not_exported, task_name
from .runtime import runtime_source

UTILS = "utils.py"
READER = "reader.py"


def _dataset_fields(build: BuildExport, config: str) -> dict[str, Any]:
    source = build.source
    if source.repo is None:
        return {
            "dataset_path": "parquet",
            "dataset_kwargs": {"data_files": {"test": source.data_files(config)}},
        }
    return {
        "dataset_path": source.repo,
        "dataset_name": config,
        "dataset_kwargs": {"revision": source.revision},
    }


def _metric_list(config: ExportConfig) -> list[dict[str, Any]]:
    export = config.export
    return [
        {
            "metric": name,
            "aggregation": f"!function utils.agg_{name}",
            "higher_is_better": name not in export.lower_is_better,
        }
        for name in export.metrics
    ]


def task_documents(build: BuildExport) -> dict[str, dict[str, Any]]:
    """Every task's YAML document, by file name (the group last)."""
    documents: dict[str, dict[str, Any]] = {}
    for config in build.configs:
        for setting in config.export.settings:
            name = task_name(build.dataset, config.name, setting)
            common = {
                **_dataset_fields(build, config.name),
                "test_split": "test",
                "doc_to_text": f"!function utils.doc_to_text_{setting}",
                "doc_to_target": "!function utils.doc_to_target",
                "metric_list": _metric_list(config),
                "metadata": {"version": build.version, "config": config.name, "setting": setting},
            }
            documents[f"{config.kind}/{name}.yaml"] = {
                "task": name,
                **common,
                "output_type": "multiple_choice",
                "doc_to_choice": "!function utils.doc_to_choice",
                "target_delimiter": "",
                "process_results": "!function utils.process_results",
            }
            documents[f"{config.kind}/{name}_gen.yaml"] = {
                "task": f"{name}_gen",
                **common,
                "output_type": "generate_until",
                "generation_kwargs": generation_kwargs(config, setting),
                "filter_list": [
                    {
                        "name": EXPORT_FILTER,
                        "filter": [
                            {"function": "!function reader.ReadReply", "setting": setting},
                            {"function": "take_first"},
                        ],
                    }
                ],
                "process_results": "!function utils.process_results_gen",
            }
    tasks = [doc["task"] for doc in documents.values()]
    documents[f"_{task_name(build.dataset)}.yaml"] = {
        "group": task_name(build.dataset),
        "task": tasks,
        "metadata": {"version": build.version},
    }
    return documents


def generation_kwargs(config: ExportConfig, setting: str) -> dict[str, Any]:
    """How the ``_gen`` task decodes: greedy, with the new-token limit and stop strings ``jbcompile eval``
    uses for the same setting and no other, so that a reply is not cut where eval would read on. (lm-eval
    stops at a blank line only when a task gives no ``until``; cut there, a reply whose label comes after
    its first paragraph, or after a leading blank line, would read as no answer.)"""
    from ..evaluate.kind import EvalOptions
    from ..evaluate.registered import get_eval_kind

    kind = get_eval_kind(config.kind)
    options = EvalOptions(task=config.export.task, setting=setting, scoring="generate")
    until = list(dict.fromkeys(kind.stop_strings(options)))
    return {"until": until, "max_gen_toks": kind.max_new_tokens(options), "do_sample": False}


class _FunctionTag(str):
    """A ``!function module.name`` value, written as lm-eval's YAML tag."""


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(_FunctionTag, lambda dumper, value: dumper.represent_scalar("!function", str(value)))


def _dump(document: dict[str, Any]) -> str:
    def tagged(value: Any) -> Any:
        if isinstance(value, str) and value.startswith("!function "):
            return _FunctionTag(value.removeprefix("!function "))
        if isinstance(value, dict):
            return {k: tagged(v) for k, v in value.items()}
        if isinstance(value, list):
            return [tagged(v) for v in value]
        return value

    return yaml.dump(tagged(document), Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=100)


def utils_source(build: BuildExport, kind: str) -> str:
    """``<kind>/utils.py``: one design's prompts, answers and metrics."""
    configs = [c for c in build.configs if c.kind == kind]
    config = configs[0]
    settings = sorted({s for c in configs for s in c.export.settings})
    text = runtime_source(
        f"lm-evaluation-harness tasks of {build.dataset}: prompts, answers and jbcompile's metrics.",
        build.dataset,
        build.version,
        config,
        "lm_eval.py.in",
        {},
    )
    for setting in settings:
        text += (
            f"\n\ndef doc_to_text_{setting}(doc: Mapping[str, Any]) -> str:\n"
            f"    return render_prompt({setting!r}, doc)\n"
        )
    return text


def reader_source(build: BuildExport, kind: str) -> str:
    """``<kind>/reader.py``: the ``_gen`` tasks' filter, which reads each reply by the jbcompile installed
    where the harness runs (:mod:`.reader`): the one reader of ``eval`` and ``score``."""
    from .. import __version__
    from .runtime import GLUE, _source

    config = next(c for c in build.configs if c.kind == kind)
    values = {
        "KIND": kind,
        "TASK": config.export.task,
        "OPTION_LABELS": config.export.option_labels,
        "EXPORTED_BY": __version__,
    }
    choices_of = next(f for f in config.export.helpers if f.__name__ == "choices_of")
    parts = [
        f'"""The reply reader of the `_gen` tasks of {build.dataset} v{build.version} ({kind}): '
        "jbcompile's own.\n\n"
        "Written by `jbcompile export lm-eval`; it needs jbcompile installed where lm-eval runs.\n"
        '"""\n\nfrom __future__ import annotations\n\nimport warnings\n'
        "from collections.abc import Mapping, Sequence\nfrom typing import Any\n",
        "".join(f"{name} = {value!r}\n" for name, value in values.items()),
        _source(choices_of),
        reading.read_text(GLUE / "reader.py.in", reading.PROMPT),
    ]
    return "\n\n".join(part.strip("\n") + "\n" for part in parts)


def readme(build: BuildExport, documents: dict[str, dict[str, Any]]) -> str:
    from .. import __version__

    group = task_name(build.dataset)
    lines = [
        f"# {build.dataset} v{build.version} for lm-evaluation-harness",
        "",
        f"Written by `jbcompile export lm-eval`. The rows are read from {build.source.described}.",
        "",
        "```",
        f"lm_eval --model hf --model_args pretrained=MODEL --include_path {{this folder}} --tasks {group} "
        "--log_samples --output_path results/",
        "```",
        "",
        "`jbcompile score results/…/samples_TASK_2*.jsonl` recomputes every metric (with intervals) from one "
        "task's samples file (`_2*`, the date: `samples_TASK_*` would match `TASK_gen`'s too).",
        "",
        "The `_gen` tasks read each reply with jbcompile's own reader, as `jbcompile eval` reads it: they "
        f"need jbcompile installed where lm-eval runs (`pip install 'jbcompile=={__version__}'`); the others "
        "do not.",
        "",
        "| task | config | setting | output type |",
        "|---|---|---|---|",
    ]
    for document in documents.values():
        if "output_type" in document:
            meta = document["metadata"]
            lines.append(
                f"| `{document['task']}` | {meta['config']} | {meta['setting']} | {document['output_type']} |"
            )
    lines += ["", f"The group `{group}` runs them all.", "", "## Metrics", ""]
    kinds = {config.kind: config.export for config in build.configs}
    for kind, export in kinds.items():
        lines.append(
            f"{kind}: " + ", ".join(f"`{m}`" for m in export.metrics) + " (jbcompile's docs/eval.md)."
        )
    return "\n".join(lines + not_exported(build)) + "\n"


def export_files(build: BuildExport) -> dict[str, str]:
    """Every file of the task folder: name → text."""
    documents = task_documents(build)
    files = {name: _dump(document) for name, document in documents.items()}
    for kind in sorted({config.kind for config in build.configs}):
        files[f"{kind}/{UTILS}"] = utils_source(build, kind)
        files[f"{kind}/{READER}"] = reader_source(build, kind)
    files["README.md"] = readme(build, documents)
    return files
