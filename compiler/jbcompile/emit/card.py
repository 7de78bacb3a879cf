"""The dataset card (README.md on the Hub): YAML front matter for the Hub, prose from ``cards/``."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from ..diagnostics import Diagnostic, DiagnosticError
from ..paths import bundled_cards
from ..reading import CARD_TEMPLATE as CARD_TEMPLATE_FILE
from ..reading import is_present, template_loader
from .data import SPLIT

if TYPE_CHECKING:
    from ..compiled import Compiled

CARD_TEMPLATE = "README.md.j2"
GATE_FIELD = "I will use this dataset only to evaluate or reduce social bias, not to train biased models"


def size_category(n: int) -> str:
    for limit, label in (
        (1_000, "n<1K"),
        (10_000, "1K<n<10K"),
        (100_000, "10K<n<100K"),
        (1_000_000, "100K<n<1M"),
    ):
        if n < limit:
            return label
    return "1M<n<10M"


def front_matter(
    compiled: Compiled, data_digests: dict[str, str] | None = None, dataset_info: list | None = None
) -> dict:
    """The card's YAML: what the Hub and ``datasets`` read.

    Each config's ``description`` names the sha256 of its data. ``datasets`` keys its cache of a local
    folder on this YAML (the config entries), not on the data files' contents; with the digest in it, a
    rebuilt folder with other rows loads fresh instead of from the cache of the previous build.
    """
    dataset = compiled.project.dataset
    largest = max((c.count for c in compiled.configs.values()), default=0)
    configs = []
    for name in compiled.configs:
        entry: dict = {"config_name": name}
        if name == compiled.default_config:
            entry["default"] = True
        entry["data_files"] = [{"split": SPLIT, "path": f"data/{name}/{SPLIT}-*.parquet"}]
        digest = (data_digests or {}).get(name)
        if digest:
            entry["description"] = f"{compiled.configs[name].count} rows; data sha256 {digest}"
        configs.append(entry)
    return {
        "pretty_name": dataset.pretty_name,
        "license": dataset.license,
        "language": [compiled.project.lang] if compiled.project.lang != "ja" else list(dataset.language),
        "task_categories": ["question-answering", "multiple-choice"],
        "task_ids": ["multiple-choice-qa"],
        "size_categories": [size_category(largest)],
        "tags": ["social-bias", "bias-evaluation", "japanese", "jbcompile"],
        "extra_gated_prompt": dataset.terms_of_use.strip(),
        "extra_gated_fields": {GATE_FIELD: "checkbox"},
        "configs": configs,
    } | ({"dataset_info": dataset_info} if dataset_info else {})


def category_table(compiled: Compiled) -> tuple[list[str], list[dict]]:
    """Rows and templates per category and config, for the card and `jbcompile stats`."""
    names = list(compiled.configs)
    categories = sorted({category for c in compiled.configs.values() for category in c.categories})
    table = []
    for category in categories:
        entry: dict = {"category": category}
        for name, config in compiled.configs.items():
            templates: Mapping[str, int] = config.categories.get(category, {})
            entry[name] = sum(templates.values())
            entry[f"{name}_templates"] = len(templates)
        table.append(entry)
    return names, table


def audit_table(compiled: Compiled) -> dict | None:
    """The shortcut audit as the card shows it: per config, one line per probe (its overall figures and
    its highest category), plus whether every probe stayed under its bar."""
    report = compiled.audit
    if report is None:
        return None
    configs: dict[str, list[dict]] = {}
    for result in report.results:
        line = {
            "probe": result.probe,
            "title": result.title,
            "scores": result.scores,
            "not_run": result.not_run,
        }
        if result.overall is not None:
            top = max(result.categories.items(), key=lambda item: (item[1].value, item[0]))
            exceeds = ["all" if name == "overall" else name for name, _ in result.exceeded()]
            leaning = [
                f"{'all' if name == 'overall' else name} {_percent(scope.value)}"
                for name, scope in result.scopes("over, not significant")
            ]
            verdict = ("above the bar in " + ", ".join(exceeds)) if exceeds else "within"
            if result.overall.threshold is None:
                verdict = "reported, not judged (no bar)"
            if leaning:
                verdict += "; over the bar on the point figure, not significantly, in " + ", ".join(leaning)
            line |= {
                "rows": f"{result.overall.rows:,}",
                "value": _percent(result.overall.value),
                "interval": f"{_percent(result.overall.low)}–{_percent(result.overall.high)}",
                "chance": _percent(result.overall.chance),
                "threshold": "—" if result.overall.threshold is None else _percent(result.overall.threshold),
                "highest": f"{top[0]} {_percent(top[1].value)}",
                "rule": result.overall.rule,
                "verdict": verdict,
            }
        configs.setdefault(result.config, []).append(line)
    return {"passed": report.passed, "margin": report.settings.margin, "configs": configs}


def _percent(value: float) -> str:
    return f"{100 * value:.1f}%"


def review_summary(compiled: Compiled) -> dict:
    """How many templates are reviewed, in what state, by whom, and the latest review date."""
    states: Counter[str] = Counter()
    reviewers: Counter[str] = Counter()
    dates = []
    for template in compiled.project.templates:
        review = getattr(template.model, "review", None)
        states[review.status if review is not None else "missing"] += 1
        if review is not None:
            reviewers[review.by] += 1
            dates.append(review.date.isoformat())
    return {
        "total": len(compiled.project.templates),
        "reviewed": states.get("reviewed", 0),
        "states": dict(sorted(states.items())),
        "reviewers": sorted(reviewers.items(), key=lambda item: (-item[1], item[0])),
        "latest": max(dates, default=None),
    }


def render_card(
    compiled: Compiled,
    cards_dir: Path | None = None,
    data_digests: dict[str, str] | None = None,
    dataset_info: list | None = None,
) -> str:
    """Render the card; a broken card template is a B005 diagnostic at its file and line."""
    import jinja2

    folder = Path(cards_dir) if cards_dir else _cards_for(compiled.project.root) or bundled_cards()
    try:
        return _render(compiled, folder, data_digests, dataset_info)
    except jinja2.TemplateSyntaxError as exc:
        raise _card_error(folder, exc.lineno, exc.message or str(exc)) from None
    except jinja2.TemplateNotFound as exc:
        raise _card_error(folder, None, f"template {exc.name} not found in {folder}") from None
    except DiagnosticError:  # a template file beyond its bound (F001)
        raise
    except Exception as exc:  # the template is the user's code: whatever it raises is its own error
        raise _card_error(folder, _template_line(exc), f"{type(exc).__name__}: {exc}") from None


def _template_line(exc: BaseException) -> int | None:
    """The card template's line where rendering failed, from the traceback (Jinja maps it back)."""
    import traceback

    lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename.endswith(".j2")]
    return lines[-1] if lines else None


def _card_error(folder: Path, line: int | None, message: str) -> DiagnosticError:
    return DiagnosticError(
        [
            Diagnostic(
                code="B005",
                message=f"the dataset card template cannot be rendered: {message}",
                path=str(folder / CARD_TEMPLATE),
                line=line,
                col=1 if line else None,
                hint="fix the Jinja template; it renders in a sandbox, with the card's variables only (see "
                "cards/README.md.j2 in the repository for a working one)",
            )
        ]
    )


def _render(
    compiled: Compiled, folder: Path, data_digests: dict[str, str] | None, dataset_info: list | None = None
) -> str:
    from jinja2.sandbox import SecurityError

    from .. import __version__
    from ..limits import MAX_DOCUMENT_BYTES, MIB
    from ..usertemplates import render, user_environment

    environment = user_environment(template_loader(folder, CARD_TEMPLATE_FILE), MAX_DOCUMENT_BYTES)
    names, table = category_table(compiled)
    matter = yaml.safe_dump(
        front_matter(compiled, data_digests, dataset_info), allow_unicode=True, sort_keys=False, width=1000
    )
    templates_by_origin = Counter(getattr(t.model, "origin", "added") for t in compiled.project.templates)
    variables = dict(
        front_matter=matter.rstrip("\n"),
        dataset=compiled.project.dataset,
        lang=compiled.project.lang,
        configs=compiled.configs,
        config_names=names,
        default_config=compiled.default_config,
        table=table,
        totals={name: c.count for name, c in compiled.configs.items()},
        templates=len(compiled.project.templates),
        templates_by_origin=dict(templates_by_origin),
        templates_by_kind=dict(sorted(Counter(t.kind for t in compiled.project.templates).items())),
        reviews=review_summary(compiled),
        compiler_version=__version__,
        sources_hash=compiled.sources_hash,
        audit=audit_table(compiled),
    )
    variables["design_sections"] = design_sections(compiled, variables)
    card = render(environment.get_template(CARD_TEMPLATE), **variables)
    if len(card.encode("utf-8")) > MAX_DOCUMENT_BYTES:  # what `publish` and `verify` read back
        raise SecurityError(f"the card is larger than {MAX_DOCUMENT_BYTES // MIB} MiB")
    return card


def design_sections(compiled: Compiled, variables: dict) -> list[str]:
    """Each design's own card section (its ``card.md.j2``: its columns), in the order of the configs,
    rendered with the card's variables; a design whose configs the build lacks shows none."""
    from ..designs import get_design
    from ..limits import MAX_DOCUMENT_BYTES
    from ..usertemplates import render, user_environment

    sections = []
    for kind in dict.fromkeys(config.kind for config in compiled.configs.values()):
        path = get_design(kind).card_section
        if path is None:
            continue
        environment = user_environment(template_loader(path.parent, CARD_TEMPLATE_FILE), MAX_DOCUMENT_BYTES)
        sections.append(render(environment.get_template(path.name), **variables).strip())
    return sections


def _cards_for(sources_root: Path) -> Path | None:
    """A benchmark may keep its own card templates in ``cards/`` beside its sources folder."""
    candidate = Path(sources_root).resolve().parent / "cards"
    return candidate if is_present(candidate / CARD_TEMPLATE, CARD_TEMPLATE_FILE) else None
