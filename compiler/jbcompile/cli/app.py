"""The typer application every command module registers on; shared CLI helpers."""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import typer
from rich.console import Console
from rich.markup import escape
from rich.segment import Segment
from rich.text import Text
from typer.core import TyperGroup

from .. import __version__
from ..diagnostics import Diagnostic, DiagnosticError, Severity, render
from ..redaction import redact, scrub_logs_and_warnings
from ..services import word_hub_retries
from ..text import shown, shown_name

if TYPE_CHECKING:
    from rich.table import Table

    from ..paths import SourcesChoice


class CommandsOnDemand(TyperGroup):
    """The root command group: a command's module is imported when the command is asked for.

    A command is looked for first in the module of its own name (`build` in ``cli/build.py``), then in
    every module; listing the commands (``--help``) imports them all. Starting `jbcompile build` or
    `jbcompile check` so skips the evaluator's imports (a fifth of a second)."""

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands:
            self._load(cmd_name)
        if cmd_name not in self.commands:  # not in the module of its name: in another one, or nowhere
            self._load(None)
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: Any) -> Any:
        """A required argument or option left out is a diagnostic as every other is (:func:`missing`),
        not typer's boxed usage error: exit 2, nothing written."""
        try:
            return super().invoke(ctx)
        except _MISSING_PARAMETER as error:
            raise fail(DiagnosticError([missing(error.ctx, error.param)])) from None

    def list_commands(self, ctx: Any) -> list[str]:
        """Commands in the order of their modules, then the groups (`export`, `import`) by name: the same
        order however the modules came to be imported."""
        self._load(None)
        rank = {name: index for index, name in enumerate(command_modules())}

        def place(item: tuple[int, str]) -> tuple[bool, int, str, int]:
            index, name = item
            callback = getattr(self.commands[name], "callback", None)
            if isinstance(self.commands[name], click.Group) or callback is None:
                return (True, 0, name, index)
            return (False, rank.get(callback.__module__.rpartition(".")[2], len(rank)), "", index)

        return [name for _, name in sorted(enumerate(self.commands), key=place)]

    def _load(self, cmd_name: str | None) -> None:
        modules = command_modules()
        for name in [cmd_name] if cmd_name in modules else modules:
            importlib.import_module(f"{__package__}.{name}")
        built = typer.main.get_command(app)
        assert isinstance(built, TyperGroup)
        for name, command in built.commands.items():
            self.commands.setdefault(name, command)


def command_modules() -> list[str]:
    """The modules of this package that register commands, in the order --help lists them."""
    import pkgutil

    here = Path(__file__).parent
    return sorted(m.name for m in pkgutil.iter_modules([str(here)]) if m.name != "app" and m.name[0] != "_")


app = typer.Typer(
    cls=CommandsOnDemand,
    name="jbcompile",
    help="Compile Japanese social-bias benchmarks from YAML sources into Hugging Face datasets, and "
    "evaluate models on them.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


# No emoji codes (":100:" in "file.yaml:100:3" would print an emoji) and no highlighting; text that
# comes from users or files is printed with markup=False or escaped.
class _RedactingConsole(Console):
    """Every text printed passes :func:`jbcompile.redaction.redact`: no secret, in any form, is shown;
    and :func:`jbcompile.text.shown`: a character a reader cannot see (a bidirectional override, a
    zero-width space, a control character) from the sources or a build is written out as ``<U+202E>``,
    so that what the terminal shows is what the file holds."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        super().print(*(redact(o) if isinstance(o, str) else o for o in objects), **kwargs)

    def render_str(self, text: str, **kwargs: Any) -> Text:
        return super().render_str(shown(text), **kwargs)  # strings: printed, table cells and titles

    def render(self, renderable: Any, options: Any = None) -> Iterable[Segment]:
        if isinstance(renderable, Text):  # a Text built elsewhere (rich's own, a caller's)
            renderable = _shown_text(renderable)
        return super().render(renderable, options)

    @property
    def soft_wrap(self) -> bool:
        """Outside a terminal (a pipe, a file, a CI log) lines are never folded at 80 columns: a folded
        path or template id cannot be searched for or pasted (tables: :func:`print_table`)."""
        return self._soft_wrap or not self.is_terminal

    @soft_wrap.setter
    def soft_wrap(self, value: bool) -> None:
        self._soft_wrap = value


def _shown_text(text: Text) -> Text:
    """A Text with its unseen characters written out, each piece keeping its style."""
    plain = text.plain
    if shown(plain) == plain:
        return text
    cuts = sorted({i + step for i, char in enumerate(plain) if shown(char) != char for step in (0, 1)})
    result = text.blank_copy()
    for piece in text.divide(cuts):
        if shown(piece.plain) != piece.plain:
            piece = Text(shown(piece.plain), style=piece.get_style_at_offset(_plain_console, 0))
        result.append_text(piece)
    return result


scrub_logs_and_warnings()  # a library's log line or warning shows no secret either
word_hub_retries()  # nor is the Hub client's retrying shown as its raw log line
err_console = _RedactingConsole(stderr=True, highlight=False, emoji=False)
_plain_console = Console()  # only to resolve a piece's style name
out_console = _RedactingConsole(highlight=False, emoji=False)

# Exit codes shared by every command.
EXIT_OK = 0
EXIT_FINDINGS = 1  # the input was read, and has errors (lint findings, failed verification)
EXIT_INPUT = (
    2  # the input could not be read or validated, or the run stopped (the message says what was kept)
)
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT, as a shell reports it)


def _version_callback(value: bool) -> None:
    if value:
        out_console.print(f"jbcompile {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version_callback, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """jbcompile: benchmark sources in, versioned datasets and reference metrics out."""


def print_diagnostics(diagnostics: Sequence[Diagnostic], fmt: str = "text") -> None:
    if not diagnostics:
        return
    text = render(diagnostics, fmt)
    if fmt == "json":
        print(text)
    else:
        for line in text.splitlines():
            err_console.print(line, markup=False, soft_wrap=True)


def exit_code(diagnostics: Iterable[Diagnostic]) -> int:
    """The exit code of what a command found, the same for every command: 0 without errors, 1 when
    every error is a finding (a lint rule's, a release check's, an audit bar's: the input was read and
    judged), 2 when an error is of input that cannot be read or validated (see
    :func:`jbcompile.codes.is_finding`)."""
    from ..codes import is_finding

    errors = [d for d in diagnostics if d.severity is Severity.ERROR]
    if not errors:
        return EXIT_OK
    return EXIT_FINDINGS if all(is_finding(d.code) for d in errors) else EXIT_INPUT


def fail(error: DiagnosticError, fmt: str = "text", code: int | None = None) -> typer.Exit:
    """Print a stage's diagnostics and return the Exit to raise: no traceback reaches the user.

    Its code is ``code``, else what :func:`exit_code` says of the diagnostics (2 where none is an error)."""
    print_diagnostics(error.diagnostics, fmt)
    errors = sum(1 for d in error.diagnostics if d.severity is Severity.ERROR)
    if fmt != "json":
        kept = ", ".join(shown_name(str(path)) for path in error.written)
        done = f"; kept {kept}" if kept else "; nothing was written"
        if error.kept is not None:  # the stage looked at the disk: its account is the true one
            done = f"; {error.kept}"
        err_console.print(f"[bold red]{errors} error(s)[/]{escape(done)}.", highlight=False, soft_wrap=True)
    return typer.Exit(code if code is not None else exit_code(error.diagnostics) or EXIT_INPUT)


def interrupted(stop: KeyboardInterrupt) -> typer.Exit:
    """Ctrl-C: say what the command left on disk (its account, ``stop.kept``, is set wherever the command
    had begun to write: see :func:`jbcompile.evaluate.predictions.telling_what_is_kept`; without one the
    stop came before, and nothing was written); exit 130."""
    kept = getattr(stop, "kept", None) or "nothing was written"
    shown = escape("; " + kept)
    err_console.print(f"[bold red]interrupted[/]{shown}.", highlight=False, soft_wrap=True)
    return typer.Exit(EXIT_INTERRUPTED)


Stamp = tuple[int, int, int, int]  # device, inode, size, mtime (ns): a file or folder as it stands


def stamps(root: Path) -> dict[Path, Stamp]:
    """Every file and folder at and under ``root`` as it stands (nothing when it is not there), to tell
    after a stop what a command changed (:func:`changed_since`)."""
    found: dict[Path, Stamp] = {}
    for path in [root, *(sorted(root.rglob("*")) if root.is_dir() else [])]:
        try:
            info = os.stat(path)
        except OSError:
            continue
        found[path] = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
    return found


def changed_since(before: dict[Path, Stamp], root: Path) -> list[Path]:
    """The files and folders at and under ``root`` that are new, changed or gone since ``before``."""
    now = stamps(root)
    return sorted(path for path in before.keys() | now.keys() if before.get(path) != now.get(path))


def print_table(table: Table, console: Console = out_console) -> None:
    """Print a table whole: never squeezed (and its numbers cut to "…", its ids folded) to fit the
    terminal, or the 80 columns rich assumes outside one."""
    from rich.measure import Measurement

    for column in table.columns:  # measured as they will be shown (a Text's unseen characters written out)
        column._cells = [_shown_text(c) if isinstance(c, Text) else c for c in column._cells]
    needed = Measurement.get(console, console.options.update_width(10_000), table).maximum
    width = console.width
    console.width = max(needed, width)
    try:
        console.print(table, soft_wrap=False)
    finally:
        console.width = width


def option_error(code: str, message: str, hint: str) -> typer.Exit:
    """A bad command-line option as a coded diagnostic (CL0xx) with what to give instead; return the
    Exit(2) to raise."""
    print_diagnostics([Diagnostic(code=code, message=message, hint=hint)])
    return typer.Exit(EXIT_INPUT)


# The error typer raises for a required parameter left out (click's, or typer's own copy of click).
_MISSING_PARAMETER: Any = importlib.import_module(typer.BadParameter.__module__).MissingParameter

# The diagnostic a command's docs give a required parameter left out (`compare` without runs: EV214), by
# the command's words and the parameter's name (:func:`when_missing`); any other is CL012.
_WHEN_MISSING: dict[tuple[str, str], Callable[[], Diagnostic]] = {}


def when_missing(command: str, parameter: str, diagnostic: Callable[[], Diagnostic]) -> None:
    """Give ``parameter`` of ``command`` (``"compare"``, ``"export lm-eval"``), left out, the command's
    own diagnostic instead of CL012; ``diagnostic`` is called only then (it may import what it needs)."""
    _WHEN_MISSING[(command, parameter)] = diagnostic


def missing(ctx: Any, param: Any) -> Diagnostic:
    """The diagnostic of a required argument or option left out: the command's own (:func:`when_missing`),
    else CL012 naming the parameter, what it is (its help) and where to read more."""
    names: list[str] = []
    while ctx is not None and ctx.parent is not None:  # the command's words, below the root
        names.insert(0, ctx.info_name)
        ctx = ctx.parent
    command = " ".join(names)
    name = str(getattr(param, "name", None) or "")
    own = _WHEN_MISSING.get((command, name))
    if own is not None:
        return own()
    value = str(getattr(param, "metavar", None) or name.upper())
    value += "..." if getattr(param, "nargs", 1) == -1 else ""
    opts = [opt for opt in getattr(param, "opts", []) if opt.startswith("--")]
    what = f"{opts[0]} {value}" if getattr(param, "param_type_name", "") == "option" and opts else value
    about = str(getattr(param, "help", None) or "").strip().rstrip(".")
    return Diagnostic(
        code="CL012",
        message=f"`jbcompile {command}` needs {what}, which was not given",
        hint=f"pass {what}" + (f": {about}" if about else "") + f"; `jbcompile {command} --help` lists what "
        "it takes",
    )


def check_choice(option: str, value: str, choices: Sequence[str]) -> str:
    """Refuse an option value outside its choices with CL001, naming the choices."""
    if value not in choices:
        raise option_error(
            "CL001",
            f"{option} {value!r} is not one of: {', '.join(choices)}",
            f"pass one of them, e.g. {option} {choices[0]}",
        )
    return value


def sources_for(given: Path | None, doing: str, into: Path | None = None) -> SourcesChoice:
    """The sources folder a command reads (the one rule: :func:`jbcompile.paths.choose_sources`), said
    in the command's first line; the bundled benchmark only when no benchmark is found, and then so."""
    from ..paths import choose_sources

    choice = choose_sources(given)
    announce_sources(choice, doing, into)
    return choice


def announce_sources(choice: SourcesChoice, doing: str, into: Path | None = None) -> None:
    """One line on stderr: which benchmark (name, version, title) from which folder, and where to."""
    from ..paths import display_path
    from ..project import dataset_label
    from ..text import shown_name

    # Read before validation: a name, title or folder with a line break in it is written out, never
    # printed as a line of its own.
    label = dataset_label(choice.root)
    where = shown_name(display_path(choice.root) or ".")
    what = f"{shown_name(label)} from {where}" if label else where
    to = f" into {shown_name(display_path(into))}" if into is not None else ""
    if choice.how == "bundled":
        err_console.print(
            f"[yellow]no dataset.yaml in this folder or above it[/]: {escape(doing)} the benchmark bundled "
            f"with jbcompile, {escape(what)}{escape(to)} (pass --sources DIR for yours, or start one with "
            "`jbcompile init`)",
            highlight=False,
        )
        return
    bundled = " (the benchmark bundled with jbcompile)" if choice.is_bundled else ""
    err_console.print(f"{doing} {what}{to}{bundled}", markup=False)
