"""The Typer application and the one place where errors become a line and an exit code."""

from __future__ import annotations

import logging
import sys

import typer
from rich.markup import escape

from nexmark import __version__, console, diskspace, interrupts
from nexmark.console import err
from nexmark.errors import Interrupted, NexmarkError

app = typer.Typer(
    name="nexmark",
    help="Two-phase Nexmark benchmarks for stream processors: warm-up, checkpoint, restore, "
    "then a scored benchmark phase.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _version(value: bool) -> None:
    if value:
        print(f"nexmark {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Show the version."
    ),
    quiet: bool = typer.Option(
        False,
        "--quiet",
        "-q",
        help="No progress bars or progress lines (phase, checkpoint and result lines stay).",
    ),
) -> None:
    console.set_quiet(quiet)


def _register_commands() -> None:
    # Each command module adds its commands to `app`; keep one line per module.
    import nexmark.cli.engines  # noqa: F401
    import nexmark.cli.generate  # noqa: F401
    import nexmark.cli.queries  # noqa: F401
    import nexmark.cli.report  # noqa: F401
    import nexmark.cli.run  # noqa: F401
    import nexmark.cli.sustainable  # noqa: F401
    import nexmark.cli.verify  # noqa: F401
    from nexmark.cli import load

    app.command("load")(load.load_command)


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app, turning expected failures into one line and an exit code."""
    _register_commands()
    # Libraries log through the root logger (py4j even logs Ctrl-C with a traceback); with a
    # handler installed, logging never falls back to printing them. Errors reach the user as
    # NexmarkError lines instead.
    logging.getLogger().addHandler(logging.NullHandler())
    interrupts.handle_terminate()
    try:
        # Typer's standalone mode handles usage errors (exit 2) and --help itself.
        app(args=argv, prog_name="nexmark")
    except NexmarkError as exc:
        err.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)  # one line, unwrapped
        sys.exit(interrupts.exit_code() if isinstance(exc, Interrupted) else exc.exit_code)
    except KeyboardInterrupt:
        err.print("[bold red]interrupted[/]")
        sys.exit(interrupts.exit_code())
    except OSError as exc:  # full disk, permissions: still one line, never a traceback
        line = str(exc)
        if diskspace.is_disk_full(exc) and exc.filename:
            line = f"disk full writing {exc.filename}: {diskspace.free_space(exc.filename)}"
        err.print(f"[bold red]error:[/] {escape(line)}", soft_wrap=True)  # one line, unwrapped
        sys.exit(1)
