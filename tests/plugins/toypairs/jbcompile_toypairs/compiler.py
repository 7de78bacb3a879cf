"""The compile part of ``toypairs``: its template model, its one config and how a template expands."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from typing import Literal

from jbcompile.designs.base import ConfigSpec, Kind, Row, TemplateRows, config_problem
from jbcompile.schema import text_in
from jbcompile.schema.common import Identifier, SlotName, StrictModel, Text
from jbcompile.templating import CompiledText, FilledText, stable_id
from pydantic import Field

CONFIG = "toypairs"
ORDERS = ("supported_first", "stereotyped_first")


class ToyTemplate(StrictModel):
    kind: Literal["toypairs"]
    id: Identifier
    category: Identifier
    slot: SlotName = Field(default="NAME", description="The slot the person's filler goes into.")
    group: Identifier = Field(description="The vocab group of the person.")
    context: Text
    supported: Text = Field(description="The statement the context supports.")
    stereotyped: Text = Field(description="The statement only a stereotype suggests.")


@cache
def row_schema():
    import pyarrow as pa

    return pa.schema(
        [
            ("example_id", pa.string()),
            ("template_id", pa.string()),
            ("category", pa.string()),
            ("context", pa.string()),
            ("statement_a", pa.string()),
            ("statement_b", pa.string()),
            ("order", pa.string()),
            ("label", pa.int64()),
        ]
    )


def _fillers(template, project) -> list[str]:
    group = project.vocab.get(template.model.group)
    if group is None:
        return []
    return [text_in(f if isinstance(f, str) else f.text, project.lang) or "" for f in group.group.fillers]


def _texts(template, project) -> dict[str, CompiledText]:
    model = template.model
    return {
        name: CompiledText.parse(text_in(getattr(model, name), project.lang) or "")
        for name in ("context", "supported", "stereotyped")
    }


class ToyKind(Kind):
    name = "toypairs"
    template_model = ToyTemplate
    configs = (
        ConfigSpec(CONFIG, "each filler of the person group × both statement orders", row_schema, True),
    )

    def validate(self, template, project):
        model = template.model
        problems = []
        if model.group not in project.vocab:
            problems.append(template.diagnostic(("group",), "R002", f"unknown vocab group {model.group!r}"))
        for name, text in _texts(template, project).items():
            for slot in text.slots:
                if slot != model.slot:
                    problems.append(template.diagnostic((name,), "R001", f"unknown slot {{{{{slot}}}}}"))
        return problems

    def language_coverage(self, template, lang):
        model = template.model
        found = [
            text_in(getattr(model, name), lang) is not None
            for name in ("context", "supported", "stereotyped")
        ]
        return "all" if all(found) else "some" if any(found) else "none"

    def expand(self, template, project) -> list[Row]:
        model = template.model
        texts = _texts(template, project)
        rows = []
        for filler in _fillers(template, project):
            values = {model.slot: filler}
            supported, stereotyped = texts["supported"].fill(values), texts["stereotyped"].fill(values)
            for order in ORDERS:
                first, second = (supported, stereotyped) if order == ORDERS[0] else (stereotyped, supported)
                rows.append(
                    {
                        "example_id": stable_id(model.id, filler, order),
                        "template_id": model.id,
                        "category": model.category,
                        "context": texts["context"].fill(values),
                        "statement_a": first,
                        "statement_b": second,
                        "order": order,
                        "label": 0 if order == ORDERS[0] else 1,
                    }
                )
        return rows

    def build(self, template, project) -> TemplateRows:
        return TemplateRows(rows={CONFIG: self.expand(template, project)})

    def filled_texts(self, template, project) -> Iterable[FilledText]:
        model = template.model
        roles = {model.slot: "person"}
        for filler in _fillers(template, project):
            for name, text in _texts(template, project).items():
                filled = text.fill_with_spans({model.slot: filler}, roles)
                yield FilledText((name,), filled.text, filled.spans)

    def verifier(self, config, project):
        return OrderBalance(config, project)


class OrderBalance:
    """Both statement orders in equal numbers: a model that always answers A scores exactly half."""

    def __init__(self, config: str, project) -> None:
        self.config, self.project, self.counts = config, project, {order: 0 for order in ORDERS}

    def add(self, rows: Sequence[Row]) -> None:
        for row in rows:
            self.counts[row["order"]] += 1

    def finish(self, repeated: Mapping[str, int]):
        if len(set(self.counts.values())) > 1:
            return [config_problem("TOY01", self.config, f"unbalanced orders {self.counts}", self.project)]
        return []


KIND = ToyKind()
