"""The flags `run`, `verify`, `sustainable` and `generate` share: one spelling, one type, one
help text, one parser (cli/options.py). Values are parsed by the real command line (Typer's
parsing of each command, without running it); bad values go through `nexmark`'s entry point,
in process and as a real process, and must come back as one line and exit 2."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import typer.main

import cli_process
import nexmark.cli
from nexmark.cli.app import app

COMMANDS = ("run", "verify", "sustainable", "generate")
GROUP = typer.main.get_command(app)


def _option(command: str, flag: str):
    found = [p for p in GROUP.commands[command].params if flag in p.opts]
    return found[0] if found else None


def parsed(command: str, *args: str) -> dict:
    """What `nexmark COMMAND ARGS` hands the command, parsed and converted, not run."""
    ctx = GROUP.commands[command].make_context(command, list(args))
    return ctx.params


def value_of(command: str, flag: str, text: str):
    return parsed(command, flag, text)[_option(command, flag).name]


# Each shared flag, the commands that take it, and texts with what they mean on every one.
SHARED = {
    "--events": (
        COMMANDS,
        [("4M", 4_000_000), ("1.5K", 1_500), ("1e6", 1_000_000), ("2G", 2 * 10**9), ("2000", 2000)],
    ),
    "--event-rate": (("verify", "generate"), [("2.5K", 2_500), ("100K", 100_000), ("800", 800)]),
    "--timeout": (
        ("run", "verify", "sustainable"),
        [("90s", 90.0), ("10m", 600.0), ("10min", 600.0), ("2h", 7200.0), ("300", 300.0)],
    ),
    "--checkpoint-interval": (
        ("run", "verify", "sustainable"),
        [("5s", 5.0), ("500ms", 0.5), ("10", 10.0), ("30s", 30.0)],
    ),
    "--parallelism": (("run", "verify", "sustainable"), [("4", 4)]),
    "--seed": (COMMANDS, [("7", 7)]),
    "--warmup-fraction": (("run", "generate"), [("0.6", 0.6)]),
    "--format": (COMMANDS, [("csv", "csv")]),
    "--queries": (("run", "verify", "sustainable"), [("q0,q5", "q0,q5")]),
    "--engine": (("run", "verify", "sustainable"), [("spark", "spark")]),
    "--state-ttl": (("run", "sustainable"), [("5 min", "5 min")]),
    "--rate": (("run",), [("100K", 100_000.0), ("2.5M", 2_500_000.0), ("250", 250.0)]),
    "--min-rate": (("sustainable",), [("100K", 100_000.0), ("1.5K", 1_500.0)]),
    "--p99-bound": (("sustainable",), [("500ms", 0.5), ("2s", 2.0), ("1m", 60.0)]),
    "--watermark-slack": (("verify",), [("2s", 2.0), ("500ms", 0.5), ("1", 1.0)]),
}
CASES = [
    pytest.param(command, flag, text, expected, id=f"{command} {flag} {text}")
    for flag, (commands, texts) in SHARED.items()
    for command in commands
    for text, expected in texts
]


@pytest.mark.parametrize(("command", "flag", "text", "expected"), CASES)
def test_each_shared_flag_takes_its_suffixes_on_each_command(command, flag, text, expected):
    value = value_of(command, flag, text)
    assert value == expected and type(value) is type(expected)


@pytest.mark.parametrize("flag", sorted(SHARED))
def test_the_same_text_means_the_same_on_every_command(flag):
    commands, texts = SHARED[flag]
    for text, _ in texts:
        values = {command: value_of(command, flag, text) for command in commands}
        assert len(set(values.values())) == 1, values


def _shared_flags() -> dict[str, list[str]]:
    """Every flag of the four commands that more than one of them takes."""
    on: dict[str, list[str]] = {}
    for command in COMMANDS:
        for param in GROUP.commands[command].params:
            for flag in param.opts:
                if flag.startswith("--"):
                    on.setdefault(flag, []).append(command)
    return {flag: commands for flag, commands in on.items() if len(commands) > 1}


# Where a shared flag means something else on one command, on purpose.
OWN_MEANING = {("verify", "--checkpoint-interval")}  # no 30 s bound; 1 s with --failover


def test_every_shared_flag_is_spelled_typed_and_explained_alike():
    shared = _shared_flags()
    # the four commands share these today; a new one joins the check by itself
    assert {"--events", "--seed", "--format", "--timeout", "--parallelism", "--set"} <= set(shared)
    for flag, commands in shared.items():
        declared = {
            command: (
                tuple(_option(command, flag).opts),
                tuple(_option(command, flag).secondary_opts),
                _option(command, flag).help,
                _option(command, flag).metavar,
                _option(command, flag).is_flag,
            )
            for command in commands
            if (command, flag) not in OWN_MEANING
        }
        assert len(set(declared.values())) == 1, (flag, declared)


def test_plain_numbers_keep_their_units_and_the_defaults_their_values():
    verify = parsed("verify")
    assert verify["timeout"] == 300.0 and verify["events"] == 100_000
    assert verify["event_rate"] == 1000 and verify["checkpoint_interval"] is None
    assert parsed("verify", "--timeout", "300")["timeout"] == 300.0  # seconds, as before
    run = parsed("run")
    assert run["timeout"] == 7200.0 and run["events"] is None and run["rate"] is None
    assert parsed("sustainable")["min_rate"] == 50_000.0
    assert parsed("sustainable")["p99_bound"] == 5.0
    generate = parsed("generate")
    assert generate["events"] == 1_000_000 and generate["event_rate"] == 100_000


def test_keep_checkpoints_is_one_flag_and_verify_still_takes_keep_work():
    for command in ("run", "verify"):
        assert parsed(command, "--keep-checkpoints")["keep_checkpoints"] is True
    # verify's older spelling still works, out of the help and of run's flags
    assert parsed("verify", "--keep-work")["keep_work"] is True
    assert parsed("verify", "--keep-work", "--no-keep-work")["keep_work"] is False
    assert _option("verify", "--keep-work").hidden and _option("run", "--keep-work") is None


BAD = [
    ("--events", "lots", "--events: not a number"),
    ("--events", "1.0005K", "--events: not a whole number"),
    ("--timeout", "5x", "--timeout must be a duration like"),
    ("--timeout", "0s", "--timeout must be positive"),
    ("--checkpoint-interval", "soon", "--checkpoint-interval must be a duration like"),
    ("--parallelism", "many", "--parallelism: not a whole number"),
    ("--seed", "abc", "--seed: not a whole number"),
    ("--event-rate", "fast", "--event-rate: not a number"),
    ("--warmup-fraction", "most", "--warmup-fraction: not a number"),
    ("--rate", "100KK", "--rate: not a rate in events/s"),
    ("--min-rate", "slow", "--min-rate: not a rate in events/s"),
    ("--p99-bound", "5q", "--p99-bound must be a duration like"),
    ("--watermark-slack", "-1s", "--watermark-slack must be a duration like"),
    ("--repeat", "x", "--repeat: not a whole number"),
    ("--max-trials", "x", "--max-trials: not a whole number"),
    ("--files", "x", "--files: not a whole number"),
]
BAD_CASES = [
    pytest.param(command, flag, text, words, id=f"{command} {flag} {text}")
    for flag, text, words in BAD
    for command in COMMANDS
    if _option(command, flag) is not None
]


@pytest.mark.parametrize(("command", "flag", "text", "words"), BAD_CASES)
def test_a_bad_value_is_one_line_and_exit_2(nexmark_main, tmp_path, command, flag, text, words):
    done = nexmark_main(command, flag, text, data=tmp_path / "data")
    err = done.stderr
    lines = err.strip().splitlines()
    assert done.returncode == 2, err
    assert len(lines) == 1 and lines[0].startswith("error: ") and words in lines[0], err
    assert not (tmp_path / "data").exists()  # refused before any work


def test_every_bad_value_case_reaches_every_command_that_has_the_flag():
    # the table above must not silently skip a command: 4 commands x the flags they share
    for flag in ("--events", "--seed"):
        assert {case.values[0] for case in BAD_CASES if case.values[1] == flag} == set(COMMANDS)
    assert {case.values[0] for case in BAD_CASES if case.values[1] == "--timeout"} == {
        "run",
        "verify",
        "sustainable",
    }


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["run", "--rate", "fast"], "--rate: not a rate in events/s: 'fast'"),
        (["verify", "--timeout", "5 minutes later"], "--timeout must be a duration like"),
        (["sustainable", "--min-rate", "1KK"], "--min-rate: not a rate in events/s"),
        (["generate", "--event-rate", "lots"], "--event-rate: not a number: 'lots'"),
    ],
)
def test_a_real_process_refuses_a_bad_value_in_one_line(tmp_path, args, words):
    done = cli_process.nexmark(*args, data=tmp_path / "data")
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1 and words in lines[0] and "Traceback" not in done.stderr
    assert not (tmp_path / "data").exists()


def _cli_imports() -> dict[str, set[str]]:
    """Which modules of nexmark.cli each module of nexmark.cli imports (anywhere in it)."""
    folder = Path(nexmark.cli.__file__).parent
    graph: dict[str, set[str]] = {}
    for path in folder.glob("*.py"):
        name = f"nexmark.cli.{path.stem}"
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            found |= {n for n in names if n.startswith("nexmark.cli.") and n != name}
        graph[name] = {n for n in found if (folder / f"{n.rsplit('.', 1)[1]}.py").exists()}
    return graph


def test_the_command_registration_runs_one_way():
    graph = _cli_imports()
    assert graph["nexmark.cli.app"] >= {f"nexmark.cli.{c}" for c in COMMANDS}
    importers = [name for name, imports in graph.items() if "nexmark.cli.app" in imports]
    assert importers == [], f"only the entry point may import cli/app.py: {importers}"

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(
            n == goal or (n not in seen and reaches(n, goal, seen | {n})) for n in graph[start]
        )

    circles = [name for name in graph if reaches(name, name, set())]
    assert circles == [], f"import circle through {circles}"


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["run", "--bogus"], "No such option: --bogus"),
        (["verify", "--events"], "Option '--events' requires an argument"),
        (["compare", "a", "b", "--threshold", "x"], "Invalid value for '--threshold'"),
        (["bogus"], "No such command 'bogus'"),
    ],
)
def test_typers_own_usage_errors_are_one_line_too(nexmark_main, args, words):
    done = nexmark_main(*args)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and done.stdout == ""
    assert len(lines) == 1 and lines[0].startswith("error: ") and words in lines[0], done.stderr


def test_help_and_no_arguments_still_show_the_help(nexmark_main):
    done = nexmark_main("run", "--help")
    assert done.returncode == 0 and "--timeout" in done.stdout and "DURATION" in done.stdout
    done = nexmark_main("dataset")
    out, err = done.stdout, done.stderr
    assert done.returncode == 2 and "verify" in out + err and "error" not in out + err
