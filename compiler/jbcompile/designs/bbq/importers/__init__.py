"""The ``bbq`` design's importers: ``bbq-templates`` (BBQ's template CSVs, ``templates``) and
``bbq-jsonl`` (released BBQ-format rows, ``jsonl``).

The modules import each other in layers, never in a circle (a test checks it):

- bottom: ``common`` (the template files' records, BBQ's conventions), ``draft`` (a recovered template,
  rendered into the ``bbq`` source format), ``rows`` (released rows: parsing, reading, signatures);
- ``names`` (the full names released rows give proper-name templates), ``roundtrip`` (what the build
  reproduces of the released rows);
- ``intersectional`` (the Race_x_SES and Race_x_gender template files), ``recovery`` (a template
  recovered from its released rows);
- ``jsonl_intersectional`` (released intersectional rows, recovered into template rows);
- top: ``templates`` and ``jsonl``, each with its :class:`~jbcompile.importers.Importer`.
"""
