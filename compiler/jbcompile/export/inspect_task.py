"""``jbcompile export inspect``: an inspect task module per design (``inspect eval DIR/<file>.py@<task>``).

One ``@task`` per exportable config, named ``<dataset>_<config>``: the rows of the pinned Hub revision
(or of the local build), inspect's ``multiple_choice()`` solver, and a scorer whose metrics are
jbcompile's (:mod:`.runtime`), reported under the metric names of ``jbcompile score``.
"""

from __future__ import annotations

from . import BuildExport, not_exported, task_name
from .runtime import runtime_source


def module_name(build: BuildExport, kind: str) -> str:
    return f"{task_name(build.dataset, kind)}.py"


def module_source(build: BuildExport, kind: str) -> str:
    configs = [c for c in build.configs if c.kind == kind]
    source = build.source
    constants = {
        "REPO": source.repo,
        "REVISION": source.revision,
        "DATA_FILES": {} if source.repo else {c.name: source.data_files(c.name) for c in configs},
    }
    text = runtime_source(
        f"inspect tasks of {build.dataset} ({kind}): rows, solver, and jbcompile's metrics.",
        build.dataset,
        build.version,
        configs[0],
        "inspect.py.in",
        constants,
    )
    for config in configs:
        text += (
            f"\n\n@task\ndef {task_name(build.dataset, config.name)}() -> Task:\n"
            f'    """Config {config.name} ({config.rows} rows) of {build.dataset} v{build.version}."""\n'
            f"    return make_task({config.name!r})\n"
        )
    return text


def readme(build: BuildExport) -> str:
    lines = [
        f"# {build.dataset} v{build.version} for inspect",
        "",
        f"Written by `jbcompile export inspect`. The rows are read from {build.source.described}.",
        "",
        "| command | config | rows |",
        "|---|---|---|",
    ]
    for config in build.configs:
        module = module_name(build, config.kind)
        task = task_name(build.dataset, config.name)
        lines.append(f"| `inspect eval {module}@{task} --model MODEL` | {config.name} | {config.rows} |")
    lines += [
        "",
        "`jbcompile score logs/<log>.eval` recomputes every metric (with intervals) from inspect's log.",
    ]
    return "\n".join(lines + not_exported(build)) + "\n"


def export_files(build: BuildExport) -> dict[str, str]:
    files = {
        module_name(build, kind): module_source(build, kind) for kind in {c.kind: None for c in build.configs}
    }
    files["README.md"] = readme(build)
    return files
