"""The reference evaluator: prompts → backend → predictions → metrics → report.

Modules, in pipeline order: ``requests`` (what ``eval`` and ``score`` are asked, checked before anything
loads), ``dataset`` (load a build folder, a release file or a Hub id), ``kind`` (what a design's evaluator
part plugs in; each design's lives in ``designs/<name>/``), ``prompting`` (Jinja2 prompt files in each
design's ``prompts/``; the typed prompt), ``backends`` (transformers, vllm, openai, anthropic, by name),
``resume`` (run.json: a run's identity), ``distributed`` (data-parallel processes), ``loop`` (batches →
prediction records → the log), ``run`` (``run_eval`` → ``RunResult``), ``samples`` (``--samples``),
``parsing`` (free text → option), ``bootstrap`` (metrics from counts, cluster-bootstrap intervals),
``records`` (what a predictions row must hold), ``predictions`` (the run folder's files), ``results``
(results.json's typed model), ``score`` (``run_score``), ``report`` (report.md and charts) and
``compare`` (runs side by side). Heavy libraries (torch, transformers, datasets, matplotlib) are imported
inside functions.
"""
