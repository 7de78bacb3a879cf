"""Every diagnostic code the tool reports, declared once: its area, a one-line title and the doc section
that explains it (what it means, what to do).

Three sources make the registry, so that nothing is declared twice:

- the tables below: every code of the core (sources, build, command line, import, translate, publish,
  eval …), one line each, grouped by the doc section that documents them;
- the lint rules (``JA…``): their metadata lives on the rule classes (:mod:`jbcompile.checks`);
- a design's own codes (``SB…``, ``JU…``): its spec's ``codes`` (:class:`jbcompile.designs.spec.Design`),
  so that the core names no design and a third-party design can declare its codes too.

``jbcompile check --explain CODE`` reads the registry; tests/test_codes.py holds it, the source and the
docs together (a code used but not declared, declared but not used, or not documented where it says);
the table of README.md's "Diagnostics" is generated from it (``python -m jbcompile.codes README.md``).
A declaration is a :class:`jbcompile.diagnostics.Code` (made with ``declare``), which a design's spec
names without importing this registry.
"""

from __future__ import annotations

import difflib
import inspect
import re
from dataclasses import replace
from pathlib import Path

from .diagnostics import Code, declare
from .paths import docs_root, shown_path

# What each area covers (README.md's table of codes); a design's codes have the design's name as area.
AREAS: dict[str, str] = {
    "files": "every file the tool reads: its size bound, a device or FIFO in its place, a JSON key twice",
    "yaml": "YAML that cannot be read, and the bounds checked before a file is read",
    "sources": "the source format, and which files are sources",
    "references": "references between sources: slots, vocab groups, ids, categories, languages",
    "build": "the build folder, empty configs, rationales, and the invariants of the rows",
    "cli": "command-line options, and optional dependencies not installed",
    "designs": "design plug-ins (the `jbcompile.designs` entry points)",
    "lint": "the lint rules of `jbcompile check`",
    "import": "`jbcompile import`: bringing released data in as sources",
    "translate": "`jbcompile translate` (DeepL)",
    "publish": "`publish`, `verify`, `diff`",
    "audit": "`jbcompile audit` and the build's shortcut audit; identical rows",
    "export": "`jbcompile export`: a build as lm-evaluation-harness and inspect tasks",
    "eval": "the evaluator: `EV0xx` dataset, prompts, options, model; `EV1xx` run folders and input files; "
    "`EV2xx` protocols and `compare`; `EV3xx` backends",
}

_DIAGNOSTICS = "docs/diagnostics.md"
_EVAL_RUN = "docs/eval.md#codes-of-run-problems-ev0xx"
_EVAL_INPUT = "docs/eval.md#codes-of-input-problems-ev1xx"
_EVAL_COMPARE = "docs/eval.md#jbcompile-compare"
_EVAL_BACKENDS = "docs/eval.md#backends-transformers-vllm-openai-compatible-servers-anthropic"

CODES: tuple[Code, ...] = (
    *declare(
        "files",
        "docs/guarantees.md#bounds",
        {
            "F001": "a file larger than the limit of its kind",
            "F002": "a folder, device, FIFO or socket where a file is read",
            "F003": "a JSON object that holds one key twice",
            "F004": "a zip archive whose end record declares more members or directory than the limit",
            "F005": "a prompt or card template holding a control, bidirectional or tag character",
        },
    ),
    *declare(
        "yaml",
        f"{_DIAGNOSTICS}#reading-yaml-y",
        {
            "Y001": "malformed YAML: a syntax error, or a character YAML does not allow",
            "Y002": "a mapping holds the same key twice",
            "Y003": "a mapping key that is not a plain value",
            "Y004": "a source file that cannot be read",
            "Y005": "a source file that is not UTF-8 text",
            "Y006": "a source file over 4 MiB",
            "Y007": "too many values once aliases are expanded",
            "Y008": "YAML nested more than 64 levels deep",
            "Y009": "a recursive alias",
            "Y010": "a value over 10,000 characters",
            "Y011": "a value with a YAML tag sources do not use (!!binary, !!set, a custom !tag)",
        },
    ),
    *declare(
        "sources",
        f"{_DIAGNOSTICS}#the-sources-s",
        {
            "S000": "no dataset.yaml in the sources folder",
            "S001": "a required field is missing",
            "S002": "a field has the wrong type or value",
            "S003": "an unknown field",
            "S004": "a document that is not a mapping of fields",
            "S005": "a template of an unknown kind",
            "S010": "an unknown language (--lang)",
            "S011": "a source file ending in .yml (not read)",
            "S012": "a hidden file or folder among the sources (not read)",
            "S013": "a file that is not a source file (not read)",
            "S014": "no templates/ folder",
            "S015": "an unknown entry at the top of the sources (not read)",
            "S016": "a build folder inside the sources (not read)",
            "S017": "check --fix cannot write a source file; nothing was changed",
            "S018": "a link loop among the sources (not followed)",
            "S019": "two source paths that differ only in case",
        },
    ),
    *declare(
        "references",
        f"{_DIAGNOSTICS}#references-between-sources-r",
        {
            "R001": "an unknown slot, or a slot where none may stand",
            "R002": "an unknown vocab group",
            "R003": "two templates with the same id",
            "R004": "a category dataset.yaml does not declare",
            "R005": "a person slot without fillers, a filler its group lacks, or no two different persons",
            "R006": "an answer that is not a person slot",
            "R007": "both questions have the same answer",
            "R008": "a vocab group defined twice",
            "R009": "a target not of a stereotyped group, or another person who is",
            "R010": "a text missing in the build language",
            "R011": "no unknown-option wording in the build language",
            "R012": "a template without the build language, left out of the build",
            "R013": "a brace outside a {{SLOT}}",
            "R014": "a template id that is not its file name",
            "R015": "a template in another category's folder",
            "R016": "two template ids that differ only in case",
            "R017": "symmetric_mention, but the ambiguous context does not mention both persons",
            "R018": "a lead-in or connective that names a person, or a statement not about its person first",
        },
    ),
    *declare(
        "build",
        f"{_DIAGNOSTICS}#building-b",
        {
            "B001": "--out holds something other than an earlier build",
            "B002": "nothing to build: no template",
            "B003": "--out is, holds or lies inside the working folder or the sources",
            "B004": "a build file cannot be written",
            "B005": "the dataset card template does not render",
            "B006": "a config without rows",
            "B007": "a config without rows, left out beside configs that have rows",
            "B008": "a template, or the build, above its row limit (counted before expanding)",
            "B009": "--out holds a build of another dataset (replaced only with --overwrite)",
            "B010": "a row that shows two answer options of the same text",
            "B101": "a rationale that fails verification",
            "B102": "a disambiguated gold the disambiguating context does not settle",
            "B201": "an example_id occurs twice",
            "B202": "a gold label that does not fit its context condition",
            "B203": "gold or unknown option positions unbalanced in a category",
            "B204": "biased and counter-biased disambiguated rows unbalanced in a category",
            "B205": "a template lacks a condition × polarity cell",
            "B206": "mention orders that tell the answer in a category",
        },
    ),
    *declare(
        "audit",
        "docs/audit.md#codes-au",
        {
            "AU001": "a shortcut probe is above its bar",
            "AU002": "audit.probes names a probe no design of the dataset has",
            "AU003": "a probe could not run for a reason the user can change",
            "AU004": "publish: the build records no readable shortcut audit",
            "AU010": "rows identical to an earlier row were emitted once",
            "AU011": "rows of a stable config repeat an earlier template's rows",
            "AU020": "audit: a folder that is not a build folder",
            "AU021": "audit: release files of different designs",
            "AU022": "audit: --config names a config the target lacks",
        },
    ),
    *declare(
        "cli",
        f"{_DIAGNOSTICS}#command-line-options-cl",
        {
            "CL001": "an option value outside its choices",
            "CL002": "a file the command cannot read or write",
            "CL003": "input nested too deeply, or too large for memory",
            "CL004": "check --fix on the benchmark bundled with jbcompile",
            "CL006": "--cards names a folder without a card template",
            "CL007": "init would overwrite a file: nothing was written",
            "CL010": "an output is, holds or lies inside an input, or another output",
            "CL011": "a file named like jbcompile's lock file that is not one",
            "CL008": "an optional dependency is not installed: the extra that brings it",
            "CL012": "a required argument or option left out",
        },
    ),
    *declare(
        "designs",
        f"{_DIAGNOSTICS}#design-plug-ins-ds",
        {
            "DS001": "a design plug-in cannot be loaded, or no default design is registered",
            "DS002": "a design plug-in that is not a Design",
            "DS003": "a design plug-in registered under another name, or twice",
            "DS004": "a design's importer that is not an Importer, or an import name used twice",
        },
    ),
    *declare(
        "import",
        "docs/translate.md#import-diagnostics",
        {
            "IM001": "the input cannot be read",
            "IM002": "a required column or field is missing or malformed",
            "IM003": "a proper-name template without names, or with names drawn (warning)",
            "IM004": "the stereotyped person cannot be told apart",
            "IM005": "a lexical slot with many alternatives, or one that is unused",
            "IM006": "a person who does not occur in the context as written",
            "IM007": "rows that disagree on answers, gold labels or questions",
            "IM008": "an input row the imported sources do not reproduce",
            "IM009": "(note) a value the importer derived",
            "IM010": "(note) an empty template row skipped",
            "IM011": "persons taken from vocabulary.csv, or none found there",
            "IM012": "columns with no place in the source format",
            "IM013": "(note) a version merged into another version's template",
            "IM020": "--out exists and is not empty, or is a file",
            "IM026": "(note) target fillers tagged by their own words",
            "IM027": "no vocabulary word names a stereotyped group: the target was guessed",
            "IM028": "(note) the two persons are drawn from the same words",
            "IM029": "--compare: a released row the imported sources do not reproduce",
            "IM030": "(note) two versions share their ambiguous context",
            "IM036": "(note) a brace beside a slot, kept as a rewrite",
            "IM037": "nothing was imported",
            "IM040": "an intersectional file without a required column",
            "IM041": "an intersectional row whose target cannot be read",
            "IM042": "an intersectional row whose slots do not fit",
            "IM043": "a proper-name intersectional row without usable names",
            "IM044": "a proper-name intersectional template imported with a sample of names",
            "IM045": "(note) a proper-name template imported once per gender",
            "IM046": "an intersectional row with more than four stereotyped race words",
            "IM047": "an intersectional question whose template text cannot be recovered",
            "IM048": "(note) a question recovered as intersectional",
            "IM050": "(note) --names-from: full names taken from the released rows",
            "IM051": "--names-from, --compare: a line that is not a released row",
            "IM052": "--names-from: a released row whose stereotyped person cannot be told",
            "IM053": "--names-from: a released person without one of the template's occupations",
            "IM054": "--names-from: a template none of whose released rows is usable",
            "IM055": "(note) --names-from: a template imported once per released target person",
            "IM056": "--out is, holds or lies inside an input, or is or holds the working folder",
            "IM057": "an input file given twice",
            "IM058": "--lang and the language of the contexts disagree",
            "IM059": "--report names a folder, or a file in a missing folder",
            "IM060": "--report names a user's file (without --force) or a file in a run or build folder",
            "IM061": "a template CSV row that a stray quote swallowed cells or rows into",
            "IM062": "a CSV header that names a column twice",
            "IM063": "a control character in a template CSV cell",
            "IM064": "a release row given twice (same id, or same content)",
        },
    ),
    *declare(
        "translate",
        "docs/translate.md#jbcompile-translate-paths",
        {
            "TR000": "DEEPL_AUTH_KEY is not set",
            "TR001": "DeepL rejected the key",
            "TR002": "the DeepL character quota is used up",
            "TR003": "DeepL still rate-limits after the retries",
            "TR004": "DeepL cannot be reached",
            "TR005": "any other DeepL error",
            "TR006": "(warning) DeepL's output damaged the slots: not written",
            "TR007": "DEEPL_AUTH_KEY is malformed: it cannot be sent",
            "TR010": "a malformed text in the sources",
            "TR011": "the glossary does not fit the run, or DeepL refuses it",
            "TR013": "a source file could not be written back",
            "TR014": "no sources folder",
            "TR015": "a PATH outside the sources folder",
        },
    ),
    *declare(
        "publish",
        "docs/publish.md#jbcompile-publish---repo-orgname---private---dry-run",
        {
            "P001": "the release's tag already exists on the Hub",
            "P002": "a stale build: the sources or the compiler changed since",
            "P003": "no build folder, or no readable manifest.json in it",
            "P004": "the build is of another dataset or version than dataset.yaml",
            "P005": "the build folder does not match its manifest",
            "P006": "an unreviewed machine translation",
            "P007": "no Hugging Face token",
            "P008": "the card has no gating terms",
            "P009": "a Hub or network failure",
            "P010": "CHANGELOG.md has no section for the version",
            "P011": "(warning) --private does not change an existing public repository",
            "P012": "the released tag does not hold the build folder",
            "P013": "diff: rows without a unique example_id",
            "P014": "the Hub rejects the card's metadata",
            "P015": "an empty release",
            "P016": "a data file that cannot be read, or whose row count is not the manifest's",
            "P017": "dataset.yaml still holds a placeholder of import or init",
            "P018": "(warning) the card does not say its uses, its limitations or how to cite it",
            "P019": "--repo is not the repository the build names (hub_repo), or it names none",
            "P020": "the version was released before (its release commit is in main's history)",
            "P021": "the version is below the latest release (allowed with --allow-older)",
        },
    ),
    *declare(
        "eval",
        _EVAL_RUN,
        {
            "EV001": "the evaluator does not know the kind",
            "EV002": "the dataset's columns match no kind",
            "EV003": "the dataset folder or file is not found, or is not a dataset",
            "EV004": "a config of the dataset cannot be loaded",
            "EV005": "the dataset cannot be loaded",
            "EV006": "no rows to evaluate",
            "EV010": "--prompt-file not found",
            "EV011": "no bundled prompt for the setting",
            "EV012": "a prompt template that does not parse, or includes a missing one",
            "EV013": "a prompt template that fails on a row",
            "EV014": "--chat, but the tokenizer has no chat template",
            "EV015": "a prompt template that shows the options with other labels than answers are read by",
            "EV017": "a prompt template that gives every row the same prompt (it uses no row's variable)",
            "EV020": "a task the kind does not have",
            "EV021": "a prompt setting the kind does not have",
            "EV022": "a setting that needs generation, with --scoring logprob",
            "EV023": "--shots below 0",
            "EV024": "the detect task has no cot setting",
            "EV025": "an unknown --scoring",
            "EV026": "an --answer-pattern that is not a regular expression",
            "EV027": "--answer-pattern without generation",
            "EV028": "an --answer-pattern that matches an empty reply",
            "EV029": "an --answer-pattern a one-token reply cannot meet",
            "EV030": "not enough rows to draw the shots from",
            "EV031": "a --sample smaller than the number of strata (category, context condition …)",
            "EV032": "--shots for a kind whose prompts are zero-shot",
            "EV033": "--shots above the limit (the prompt would not fit a model's context)",
            "EV040": "a row lacks a field the metrics need",
            "EV041": "a --prediction-field whose values are objects or lists, not answers",
            "EV050": "the model cannot be loaded",
            "EV051": "option labels that share their first token",
            "EV052": "out of memory on a single prompt",
            "EV053": "an unknown --dtype",
            "EV054": "(warning) most replies were cut at the token limit and read as out of choice",
            "EV055": "(warning) a model run without --thinking whose replies carry its reasoning",
            "EV056": "(warning) most rows had no option label among a server's top log-probabilities",
            "EV057": "(warning) score --dataset: predictions of only part of the dataset's rows",
            "EV060": "the predictions file is not found",
            "EV062": "the predictions file is empty",
            "EV063": "predictions of rows the dataset lacks",
            "EV064": "foreign predictions without --prediction-field",
            "EV065": "score: replies whose setting decides their answer, without --setting",
            "EV066": "score --protocol: predictions not made or read as that protocol makes them",
            "EV067": "score --setting/--answer-pattern for predictions with no reply to read",
            "EV068": "score --protocol/--setting: a harness log whose prompt labelled the options otherwise",
            "EV069": "score --answer-pattern that matches none of the replies it is to read",
        },
    ),
    *declare(
        "eval",
        _EVAL_INPUT,
        {
            "EV007": "--out holds another run",
            "EV061": "a line that is not JSON, or not a JSON object",
            "EV100": "--out names a file",
            "EV101": "--out is a folder holding other files",
            "EV102": "the run folder cannot be written",
            "EV103": "an option out of its range",
            "EV104": "--revision or --model-revision for a local path",
            "EV105": "score: a task the kind lacks",
            "EV106": "score: an unknown --kind",
            "EV107": "score: a --kind the file contradicts",
            "EV108": "--model is a path that does not exist, or a file",
            "EV109": "score --revision without --dataset",
            "EV111": "JSON nested too deeply",
            "EV112": "bytes that are not UTF-8 (a binary file?)",
            "EV114": "a JSON document without rows",
            "EV115": "a line of a predictions log without example_id",
            "EV116": "the predictions path is a folder",
            "EV117": "the predictions file cannot be read",
            "EV120": "a pred that is not an option",
            "EV121": "an example_id on two lines",
            "EV122": "a row without a category",
            "EV123": "a gold that is not an option index",
            "EV124": "a prediction without example_id",
            "EV125": "a label field the metrics cannot use",
            "EV126": "a prediction of another kind than the first line's",
            "EV127": "a prediction of another task than the first line's or --task",
            "EV128": "no row left to score",
            "EV129": "a prediction holding NaN or Infinity (no JSON number)",
            "EV130": "a row of a release or harness format that cannot be read",
            "EV135": "--prediction-field for a harness log (lm-evaluation-harness, inspect)",
            "EV140": "a release dataset with nothing to detect",
            "EV141": "a --dataset file that is not .jsonl, .json or .parquet, or a broken one",
        },
    ),
    *declare(
        "eval",
        "docs/harnesses.md#codes",
        {
            "EV142": "an inspect .eval log that cannot be read (or inspect-ai is not installed)",
            "EV143": "an inspect log of a run that did not finish, or with samples the model never answered",
            "EV144": "score: an inspect log whose epochs hold different samples (or lack epoch numbers)",
        },
    ),
    *declare(
        "export",
        "docs/harnesses.md#codes",
        {
            "EX001": "export: no Hub repository for the tasks to read (or a --repo that is not ORG/NAME)",
            "EX002": "export: no config of the build can run in the harness",
            "EX003": "export: --out is not a new or empty folder or an earlier export, or overlaps the build",
            "EX004": "export: a config of the build is of a design this installation does not have",
            "EX005": "export: --out holds an export of another dataset or for another harness",
            "EX006": "export: a --revision that is not a branch, tag or commit name",
        },
    ),
    *declare(
        "eval",
        _EVAL_COMPARE,
        {
            "EV200": "an unknown --protocol",
            "EV201": "an option the protocol's paper did not use",
            "EV202": "a protocol of another kind than the dataset's",
            "EV210": "a compare argument without a readable results.json",
            "EV211": "compare: runs of different kinds",
            "EV212": "compare: runs on different data",
            "EV213": "compare: runs under different protocols",
            "EV214": "compare without runs",
            "EV215": "compare: a run given twice",
            "EV216": "compare: a run whose results.json and predictions disagree",
        },
    ),
    *declare(
        "eval",
        _EVAL_BACKENDS,
        {
            "EV300": "an unknown --backend",
            "EV301": "no API key in the environment",
            "EV302": "--scoring logprob with a backend without log-probabilities",
            "EV303": "a request still failed after the retries",
            "EV304": "the server refused for lack of quota or credit",
            "EV305": "the server rejected a request, or it could not be sent",
            "EV306": "the server returned no top_logprobs",
            "EV307": "--samples without sampling",
            "EV308": "a backend option out of range, or one that would not be used",
            "EV309": "the server's replies were not answers, attempt after attempt (a server fault)",
            "EV310": "the model's library (transformers, vLLM) failed while running it",
            "EV311": "vLLM's CPU attention lacks the model's head dimension",
            "EV312": "vLLM has too little memory for its KV cache",
        },
    ),
)


def _lint_codes() -> list[Code]:
    from .checks import all_rules

    return [
        Code(
            rule.code,
            "lint",
            rule.description().rstrip("."),
            f"docs/checks.md#{anchor(f'{rule.code} `{rule.name}`')}",
            f"{shown_path(Path(inspect.getfile(rule)))} (the rule class)",
        )
        for rule in all_rules()
    ]


def _design_codes(builtin_only: bool) -> list[Code]:
    from .designs import all_designs

    found = []
    for design in all_designs():
        module = type(design).__module__
        if builtin_only and not module.startswith(f"{__package__}."):
            continue
        where = f"{shown_path(Path(inspect.getfile(type(design))))} ({type(design).__name__}.codes)"
        found += [replace(code, declared_in=where) for code in design.codes]
    return found


def declarations(builtin_only: bool = False) -> list[Code]:
    """Every declaration, in order: the core's, the lint rules', the designs' (a code twice is a bug).
    ``builtin_only``: leave out the designs of other distributions (their docs are not ours)."""
    return [*CODES, *_lint_codes(), *_design_codes(builtin_only)]


def all_codes() -> dict[str, Code]:
    """Every code, by code (the first declaration wins; tests/test_codes.py refuses a second)."""
    found: dict[str, Code] = {}
    for code in declarations():
        found.setdefault(code.code, code)
    return found


def get_code(code: str) -> Code | None:
    return all_codes().get(code.strip().upper())


def similar_codes(code: str, count: int = 3) -> list[str]:
    """The declared codes closest to a mistyped one (``EV23`` → ``EV023``)."""
    wanted = code.strip().upper()
    known = list(all_codes())
    close = difflib.get_close_matches(wanted, known, n=count, cutoff=0.6)
    digits = re.sub(r"\D", "", wanted)
    prefix = re.sub(r"[^A-Z]", "", wanted)
    if digits and prefix:  # a dropped or extra zero first: EV23, EV0023
        padded = f"{prefix}{int(digits):03d}"
        if padded in all_codes():
            close = [padded, *(c for c in close if c != padded)]
    return close[:count]


# ---- the docs -----------------------------------------------------------------------------------------


def anchor(heading: str) -> str:
    """The anchor GitHub gives a markdown heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def doc_section(doc: str) -> list[str] | None:
    """The lines of the section ``path#anchor`` names (its heading, then up to the next heading of its
    level or above), or None when the file or the heading is missing."""
    path, _, wanted = doc.partition("#")
    file = docs_root() / path
    if not file.is_file():
        return None
    lines = file.read_text("utf-8").splitlines()
    start = level = None
    fenced = False
    for index, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
        match = None if fenced else _HEADING.match(line)
        if match is None:
            continue
        depth = len(match.group(1))
        if start is None:
            if anchor(match.group(2)) == wanted:
                start, level = index, depth
        elif depth <= (level or 0):
            return lines[start:index]
    return None if start is None else lines[start:]


def _mentions(text: str, code: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(code)}(?![0-9])", text) is not None


def doc_text(code: Code) -> str | None:
    """What the code's doc section says about it: the table rows that name the code (as ``cell: cell —
    cell``), then the paragraphs; None when the section does not name it."""
    section = doc_section(code.doc)
    if section is None:
        return None
    heading, section = section[0], section[1:]
    if _mentions(heading, code.code):  # a section of its own (a lint rule's): all of it
        return "\n".join(section).strip() or None
    rows: list[str] = []
    found: list[str] = []
    paragraph: list[str] = []

    def flush() -> None:
        text = " ".join(line.strip() for line in paragraph)
        if _mentions(text, code.code):
            found.append(text)
        paragraph.clear()

    fenced = False
    for line in section:
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        if line.lstrip().startswith("|"):
            flush()
            cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
            if _mentions(line, code.code):
                rows.append(f"{cells[0]}: {' — '.join(cells[1:])}")
        elif not line.strip() or line.lstrip().startswith(("- ", "* ")):
            flush()
            if line.strip():
                paragraph.append(line)
        else:
            paragraph.append(line)
    flush()
    return "\n\n".join(rows + found) or None


def explain(code: Code) -> str:
    """What ``jbcompile check --explain CODE`` prints for a code that is not a lint rule."""
    text = doc_text(code)
    body = f"\n\n{text}" if text else ""
    return f"{code.code} — {code.area}: {code.title}\nDocumented in {code.doc}{body}\n"


# ---- README.md's table of codes ----------------------------------------------------------------------

TABLE_START = "<!-- codes:start (generated by jbcompile.codes.codes_table; do not edit) -->"
TABLE_END = "<!-- codes:end -->"


def codes_table() -> str:
    """README.md's table: per area, its codes (first–last of each prefix), what they cover, their docs."""
    codes = sorted(declarations(builtin_only=True), key=lambda c: c.code)
    designs = sorted(
        {c.area for c in codes} - set(AREAS), key=lambda a: min(c.code for c in codes if c.area == a)
    )
    lines = [TABLE_START, "", "| codes | area | docs |", "|---|---|---|"]
    for area in [*AREAS, *designs]:
        by_prefix: dict[str, list[str]] = {}
        for code in (c for c in codes if c.area == area):
            by_prefix.setdefault(re.sub(r"\d", "", code.code), []).append(code.code)
        if not by_prefix:
            continue
        spans = ", ".join(f"`{s[0]}`" if len(s) == 1 else f"`{s[0]}`–`{s[-1]}`" for s in by_prefix.values())
        docs = dict.fromkeys(c.doc.partition("#")[0] for c in codes if c.area == area)
        links = ", ".join(f"[{doc}]({doc})" for doc in docs)
        lines.append(f"| {spans} | {AREAS.get(area, f'the `{area}` design')} | {links} |")
    lines += ["", TABLE_END]
    return "\n".join(lines) + "\n"


def update_markdown(path: str) -> bool:
    """Rewrite the generated table of a markdown file in place; True when it changed."""
    from .fsio import rewrite_between

    return rewrite_between(Path(path), TABLE_START, TABLE_END, codes_table())


# Findings: errors of input that was read and judged (exit 1, README "Diagnostics"), as opposed to input
# that cannot be read or validated (exit 2). The lint rules' codes (`check`, and `--release`'s stricter
# JA118) and the audit's bar are findings; every other error code is of the input.
FINDING_CODES = frozenset({"AU001"})


def is_finding(code: str) -> bool:
    """Whether an error of ``code`` is a finding (exit 1) rather than unreadable or invalid input (2).
    Only the core's rules are asked: a design plug-in that cannot be loaded must not stop the answer."""
    from .checks import get_rule

    return code in FINDING_CODES or get_rule(code) is not None


if __name__ == "__main__":
    import sys

    for target in sys.argv[1:]:
        print(f"{target}: {'updated' if update_markdown(target) else 'up to date'}")
