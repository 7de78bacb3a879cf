"""``jbcompile export inspect``: an inspect task module per design (``inspect eval DIR/<file>.py@<task>``).

Per exportable config, ``<dataset>_<config>``: the rows of the pinned Hub revision (or of the local
build), inspect's ``multiple_choice()`` solver (its prompt, its reading of ``ANSWER: X``), and a scorer
whose metrics are jbcompile's (:mod:`.runtime`), reported under the metric names of ``jbcompile score``;
and per prompt setting, ``<dataset>_<config>_<setting>``: jbcompile's prompt, a reply decoded as ``eval``
decodes it, read by jbcompile's own reader (:mod:`.reader`) — so an inspect run, ``jbcompile score`` of
its log and ``jbcompile eval --scoring generate`` read the same replies alike. (jbcompile's reader cannot
read ``multiple_choice()``'s replies: its prompt letters the options A, B, C, where a design may read 0,
1, 2.)
"""

from __future__ import annotations

from .. import __version__
from . import BuildExport, not_exported, task_name
from .lm_eval import generation_kwargs
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
        "DECODING": {s: generation_kwargs(configs[0], s) for s in configs[0].export.settings},
        "EXPORTED_BY": __version__,
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
        for setting in config.export.settings:
            text += (
                f"\n\n@task\ndef {task_name(build.dataset, config.name, setting)}() -> Task:\n"
                f'    """Config {config.name}, setting {setting}: jbcompile\'s prompt and reader."""\n'
                f"    return make_setting_task({config.name!r}, {setting!r})\n"
            )
    return text


def readme(build: BuildExport) -> str:
    lines = [
        f"# {build.dataset} v{build.version} for inspect",
        "",
        f"Written by `jbcompile export inspect`. The rows are read from {build.source.described}.",
        "",
        "| command | config | prompt setting | rows |",
        "|---|---|---|---|",
    ]
    for config in build.configs:
        module = module_name(build, config.kind)
        for setting in (None, *config.export.settings):
            task = task_name(build.dataset, config.name, setting)
            command = f"`inspect eval {module}@{task} --model MODEL`"
            lines.append(f"| {command} | {config.name} | {setting or 'multiple_choice()'} | {config.rows} |")
    lines += [
        "",
        "The `<config>` task is inspect's `multiple_choice()` (its prompt, its reading of `ANSWER: X`); each "
        "`<config>_<setting>` task sends jbcompile's prompt of that setting and reads the reply with "
        "jbcompile's own reader, as `jbcompile eval --scoring generate --setting SETTING` reads it (it needs "
        "jbcompile installed where inspect runs).",
        "`jbcompile score logs/<log>.eval` recomputes every metric (with intervals) from inspect's log; "
        "under `--epochs N`, every epoch's and their mean and sd.",
    ]
    return "\n".join(lines + not_exported(build)) + "\n"


def export_files(build: BuildExport) -> dict[str, str]:
    files = {
        module_name(build, kind): module_source(build, kind) for kind in {c.kind: None for c in build.configs}
    }
    files["README.md"] = readme(build)
    return files
