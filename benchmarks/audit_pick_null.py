"""What the audit's pick of the best direction per scope does to a figure on rows without a cue.

docs/audit.md ("What the pick does to chance") quotes this script's output. Each simulated scope has
TEMPLATES templates of 24 rows whose rows stand or fall together; for each of a probe's complementary
pairs of directions, a template's share of rows right is drawn from Beta(1/2, 1/2) (templates that lean
hard one way or the other) and its mirror gets the rest; the pairs are independent, a worst case. The
figures are computed by the audit's own code (jbcompile.audit.stats.figures): the mean figure of the
chosen direction, its 95th percentile, and how often the lower end of the interval clears chance + 5.

    python benchmarks/audit_pick_null.py [--templates 25] [--scopes 400]
"""

from __future__ import annotations

import argparse

import numpy as np
from jbcompile.audit.probe import Tally
from jbcompile.audit.stats import figures

ROWS = 24


def simulate(templates: int, pairs: int, scopes: int, seed: int = 0) -> tuple[float, float, float]:
    """Mean and 95th percentile of the chosen figure, and the share of scopes above chance + 5 points."""
    rng = np.random.default_rng(seed)
    best, above = [], 0
    names = tuple(str(v) for v in range(2 * pairs))
    for scope in range(scopes):
        hits = np.round(rng.beta(0.5, 0.5, size=(templates, pairs)) * ROWS)
        tally = Tally(2 * pairs)
        for t in range(templates):
            tally.sums[("c", f"t{t}")] = np.array([ROWS, ROWS / 2, 0, *hits[t], *(ROWS - hits[t])])
        found = figures(tally, names, majority=False, resamples=300, seed_parts=("null", str(scope)))
        assert found is not None
        best.append(found.overall.value)
        above += found.overall.low > 0.55
    return float(np.mean(best)), float(np.quantile(best, 0.95)), above / scopes


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--templates", type=int, nargs="+", default=[25, 100])
    parser.add_argument("--scopes", type=int, default=400)
    args = parser.parse_args()
    for templates in args.templates:
        for pairs in (1, 2, 4):
            mean, high, above = simulate(templates, pairs, args.scopes)
            print(
                f"{templates} templates, {pairs} pair(s): mean figure {mean:.1%}, "
                f"95th percentile {high:.1%}, lower end over chance + 5: {above:.1%} of scopes"
            )


if __name__ == "__main__":
    main()
