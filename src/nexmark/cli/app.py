"""The Typer application: the one place where the commands are registered and where errors
become a line and an exit code.

The imports run one way: this module imports the command modules (each a plain function over
the library, its flags from cli/options.py) and registers them; no command module imports this
one, so the CLI has no import circle.
"""

from __future__ import annotations

import errno
import logging
import os
import sys

import typer
from rich.markup import escape

from nexmark import __version__, console, diskspace, interrupts
from nexmark.cli import engines, generate, load, queries, report, run, sustainable, verify
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


# Every command, in the order `nexmark --help` lists them.
app.command("engines")(engines.engines_command)
app.command("generate")(generate.generate)
app.command("load")(load.load_command)
dataset_app = typer.Typer(help="Inspect and check generated datasets.", no_args_is_help=True)
dataset_app.command("verify")(generate.dataset_verify)
app.add_typer(dataset_app, name="dataset")
app.command("queries")(queries.queries_command)
app.command("report")(report.report_command)
app.command("compare")(report.compare_command)
app.command("run")(run.run)
app.command("sustainable")(sustainable.sustainable)
app.command("verify")(verify.verify)


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app, turning expected failures into one line and an exit code."""
    # Libraries log through the root logger (py4j even logs Ctrl-C with a traceback); with a
    # handler installed, logging never falls back to printing them. Errors reach the user as
    # NexmarkError lines instead.
    logging.getLogger().addHandler(logging.NullHandler())
    # gRPC (loaded with PyFlink) logs to the terminal when a child process starts while its
    # threads run ("Other threads are currently calling into gRPC, skipping fork() handlers"):
    # its fork handlers are not needed (no child of ours uses gRPC), its info lines not wanted.
    os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    interrupts.handle_terminate()
    try:
        # Not standalone: Typer's usage errors come here to be one line like ours, and its
        # exit codes (--help, typer.Exit) come back as the result.
        result = app(args=argv, prog_name="nexmark", standalone_mode=False)
    except typer.TyperException as exc:  # an unknown flag, a missing value, a bad choice
        sys.exit(_usage_error(exc))
    except typer.Abort:
        err.print("[bold red]aborted[/]")
        sys.exit(1)
    except NexmarkError as exc:
        err.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)  # one line, unwrapped
        sys.exit(interrupts.exit_code() if isinstance(exc, Interrupted) else exc.exit_code)
    except KeyboardInterrupt:
        err.print("[bold red]interrupted[/]")
        sys.exit(interrupts.exit_code())
    except OSError as exc:  # full disk, permissions: still one line, never a traceback
        if exc.errno == errno.EPIPE:  # `nexmark queries | head`: the reader left, say nothing
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(1)
        line = str(exc)
        if diskspace.is_disk_full(exc) and exc.filename:
            line = f"disk full writing {exc.filename}: {diskspace.free_space(exc.filename)}"
        err.print(f"[bold red]error:[/] {escape(line)}", soft_wrap=True)  # one line, unwrapped
        sys.exit(1)
    # As in Typer's standalone mode: always exit, with typer.Exit's code (0 after --help).
    sys.exit(result if isinstance(result, int) else 0)


def _usage_error(exc: typer.TyperException) -> int:
    """Typer's usage error as one line naming the command's help; its exit code (2)."""
    if type(exc).__name__ == "NoArgsIsHelpError":  # the help is printed already (as Typer does)
        return exc.exit_code
    message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
    ctx = getattr(exc, "ctx", None)
    hint = f" ({ctx.command_path} --help)" if ctx is not None else ""
    err.print(f"[bold red]error:[/] {escape(message)}{escape(hint)}", soft_wrap=True)
    return exc.exit_code
