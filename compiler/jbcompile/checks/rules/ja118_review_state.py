"""JA118: a release ships only templates that someone has reviewed."""

from __future__ import annotations

from collections.abc import Iterable

from ...diagnostics import Severity
from ..base import Finding, Rule, register
from ..corpus import CheckContext


@register
class ReviewState(Rule):
    """A template without ``review: {status: reviewed, …}``; reported, as an error, under --release only.

    Every template records who or what last read it whole, with every filled variant in ``lite``, and
    what they decided. Drafts can be built and tried; `jbcompile build --release` (and `check --release`)
    refuses any template that is missing a review or whose review is not ``reviewed``, so an unread item
    never reaches a published version. The dataset card counts the reviews.

    Anti-pattern:
        review: {status: draft, by: 山田, date: 2026-11-20}

    Better:
        review: {status: reviewed, by: 山田, date: 2026-11-25, note: lite の12行を確認}
    """

    code = "JA118"
    name = "review-state"
    japanese = False
    release_error = True

    def check(self, ctx: CheckContext) -> Iterable[Finding]:
        if not ctx.release:
            return
        for template in ctx.project.templates:
            review = getattr(template.model, "review", None)
            status = review.status if review is not None else None
            if status == "reviewed":
                continue
            data = template.doc.data if isinstance(template.doc.data, dict) else {}
            key_path: tuple = ("review", "status") if "review" in data else ()
            yield Finding(
                template.doc,
                key_path,
                f"template {template.id} is not reviewed (review status: {status or 'missing'})",
                hint="read the template and its lite rows, then record review: {status: reviewed, by, date}",
                severity=Severity.ERROR,
            )
