"""A template recovered by either BBQ importer, before it is written: :class:`DraftTemplate`, rendered
into the ``bbq`` source format (the generic draft and vocab are ``jbcompile.importers.draft``).

The bottom of the package: it imports no other module of it.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any

from ....importers.draft import Flow, FlowList, SourcesDraft


@dataclass
class DraftTemplate:
    """A recovered ``bbq`` template, before it is rendered into YAML."""

    id: str
    category: str
    subcategory: str | None
    upstream: str
    stereotype: str
    stereotyped_groups: list[str]
    attested: str
    target_slot: str
    other_slot: str
    target_group: str
    other_group: str
    words: dict[str, list[str]]
    ambiguous: str
    disambiguating: str
    negative: tuple[str, str]  # question text, answering slot
    non_negative: tuple[str, str]
    notes: str | None = None
    answers: dict[str, str] = field(default_factory=dict)  # person slot → its answer wording
    max_alternatives: int = 3
    rewrites: list[dict[str, str]] = field(default_factory=list)
    review: str | None = None  # why the template needs changes before it is reviewed

    def source(self, draft: SourcesDraft) -> dict[str, Any]:
        """The template in the ``bbq`` source format, its texts as ``draft`` writes them (key order as in
        the bundled examples)."""
        persons = {}
        for slot in sorted((self.target_slot, self.other_slot)):
            person = Flow(group=self.target_group if slot == self.target_slot else self.other_group)
            if slot == self.target_slot:
                person["target"] = True
            if slot in self.answers:
                person["answer"] = draft.text(self.answers[slot])
            persons[slot] = person
        data: dict[str, Any] = {
            "id": self.id,
            "category": self.category,
            "subcategory": self.subcategory,
            "origin": "translated",
            "upstream": self.upstream,
            "stereotype": draft.text(self.stereotype),
            "stereotyped_groups": FlowList(self.stereotyped_groups),
            "attested": self.attested,
            "persons": persons,
        }
        if self.words:
            data["words"] = {slot: [draft.text(a) for a in alts] for slot, alts in self.words.items()}
        if self.max_alternatives > 3:
            data["max_alternatives"] = self.max_alternatives
        if self.rewrites:
            data["rewrites"] = [Flow(rewrite) for rewrite in self.rewrites]
        data["ambiguous_context"] = draft.text(self.ambiguous)
        data["disambiguating_context"] = draft.text(self.disambiguating)
        data["questions"] = {
            "negative": {"text": draft.text(self.negative[0]), "answer": self.negative[1]},
            "non_negative": {"text": draft.text(self.non_negative[0]), "answer": self.non_negative[1]},
        }
        if self.notes:
            data["notes"] = self.notes
        if self.review:
            data["review"] = {
                "status": "needs_changes",
                "by": "jbcompile import",
                "date": datetime.date.today().isoformat(),
                "note": self.review,
            }
        return data
