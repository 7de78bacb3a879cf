"""The dataset card (README.md on the Hub): YAML front matter for the Hub, prose from ``cards/``."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from .data import SPLIT

if TYPE_CHECKING:
    from ..build import Compiled

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


def front_matter(compiled: Compiled) -> dict:
    dataset = compiled.project.dataset
    largest = max((len(c.rows) for c in compiled.configs.values()), default=0)
    configs = []
    for name in compiled.configs:
        entry: dict = {"config_name": name}
        if name == compiled.default_config:
            entry["default"] = True
        entry["data_files"] = [{"split": SPLIT, "path": f"data/{name}/{SPLIT}-*.parquet"}]
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
    }


def category_table(compiled: Compiled) -> tuple[list[str], list[dict]]:
    """Rows and templates per category and config, for the card and `jbcompile stats`."""
    names = list(compiled.configs)
    categories = sorted({row["category"] for c in compiled.configs.values() for row in c.rows})
    table = []
    for category in categories:
        entry: dict = {"category": category}
        for name, config in compiled.configs.items():
            rows = [row for row in config.rows if row["category"] == category]
            entry[name] = len(rows)
            entry[f"{name}_templates"] = len({row["template_id"] for row in rows})
        table.append(entry)
    return names, table


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


def render_card(compiled: Compiled, cards_dir: Path | None = None) -> str:
    import jinja2

    from .. import __version__
    from ..paths import bundled_cards

    folder = Path(cards_dir) if cards_dir else _cards_for(compiled.project.root) or bundled_cards()
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(folder)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )
    names, table = category_table(compiled)
    matter = yaml.safe_dump(front_matter(compiled), allow_unicode=True, sort_keys=False, width=1000)
    templates_by_origin = Counter(getattr(t.model, "origin", "added") for t in compiled.project.templates)
    return environment.get_template(CARD_TEMPLATE).render(
        front_matter=matter.rstrip("\n"),
        dataset=compiled.project.dataset,
        lang=compiled.project.lang,
        configs=compiled.configs,
        config_names=names,
        default_config=compiled.default_config,
        table=table,
        totals={name: len(c.rows) for name, c in compiled.configs.items()},
        templates=len(compiled.project.templates),
        templates_by_origin=dict(templates_by_origin),
        templates_by_kind=dict(sorted(Counter(t.kind for t in compiled.project.templates).items())),
        reviews=review_summary(compiled),
        compiler_version=__version__,
        sources_hash=compiled.sources_hash,
    )


def _cards_for(sources_root: Path) -> Path | None:
    """A benchmark may keep its own card templates in ``cards/`` beside its sources folder."""
    candidate = Path(sources_root).resolve().parent / "cards"
    return candidate if (candidate / CARD_TEMPLATE).is_file() else None
