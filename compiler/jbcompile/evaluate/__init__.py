"""The reference evaluator: prompts → backend → predictions → metrics → report.

Modules, in pipeline order: ``dataset`` (load a build folder or Hub id), ``kind`` (what a design's evaluator
part plugs in; each design's lives in ``designs/<name>/``), ``prompting`` (Jinja2 prompt files in each
design's ``prompts/``), ``backends``
(transformers, batched, prefix-cache reuse), ``parsing`` (free text → option), ``bootstrap`` (metrics
from counts, cluster-bootstrap intervals), ``predictions`` (resumable JSONL, atomic writes), ``report``
(report.md and charts) and ``runner`` (``run_eval`` / ``run_score``, called by the CLI).
Heavy libraries (torch, transformers, datasets, matplotlib) are imported inside functions.
"""
