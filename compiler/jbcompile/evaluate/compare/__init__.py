"""``jbcompile compare RUN…``: runs side by side, for any kind, with paired tests on the rows they share.

Runs are compared only when like is compared with like: one kind, one dataset (config and build sources
hash, or Hub commit) and one protocol (``--protocol`` name, scoring method, shots, task); anything else
is refused (EV211–EV213). Output: one table of runs (markdown, CSV and a chart) in the protocol's column
order, and on the rows both runs of a pair answered:

- McNemar's exact test on the kind's accuracy (an out-of-choice answer counts as wrong);
- a paired bootstrap over templates of the bias scores (both runs resampled with the same templates);
- for kinds that name one (``EvalKind.chi_square_metric``), a chi-square test of the right/wrong counts
  of valid answers, per pair and over all runs;
- the design's own section, if it has one (``EvalKind.compare_section``), under the design's name.

p-values are per comparison, not adjusted for the number of comparisons.

Modules: ``runs`` (reading run folders), ``identity`` (like with like), ``stats`` (the tests), ``table``
(the comparison as data), ``render`` (markdown, CSV, chart) and ``write`` (the output folder).
"""

from .identity import check_comparable, data_identity, protocol_identity, same_data
from .runs import Run, read_run
from .stats import chi_square, mcnemar, paired_tests
from .table import compare
from .write import write_comparison

__all__ = [
    "Run",
    "check_comparable",
    "chi_square",
    "compare",
    "data_identity",
    "mcnemar",
    "paired_tests",
    "protocol_identity",
    "read_run",
    "same_data",
    "write_comparison",
]
