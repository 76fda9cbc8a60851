"""The command line's options, declared once and parsed one way on every command.

A flag that `run`, `verify`, `sustainable` and `generate` share is one `Annotated` type here, so
it has one spelling, one type, one parser and one help text wherever it appears. Values read the
way people write them:

- counts (`--events`, `--event-rate`): a whole number, with K, M or G for thousands, millions,
  billions: 200M, 1.5K, 1e6, 10_000;
- rates in events/s (`--rate`, `--min-rate`): the same suffixes, fractions allowed: 100K, 2.5;
- durations (`--timeout`, `--checkpoint-interval`, `--p99-bound`, `--watermark-slack`): a number
  and a unit: 500ms, 90s, 10m, 10min, 2h; a plain number is seconds.

A value that does not parse is a `UsageError`: one line and exit 2 (cli/app.py), not Typer's
usage box. The parsers check only the form; ranges (positive, at most 30 s, between 0 and 1)
stay with the objects the values feed (`RunOptions`, `SearchOptions`, `DatasetParams`), so a
value is refused with the same words whichever way it arrives.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Callable, Iterator
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Annotated, Any

import typer

from nexmark.durations import parse_seconds
from nexmark.errors import UsageError
from nexmark.protocol.preparation.prepare import parse_checkpoint_interval, parse_timeout
from nexmark.storage.files import Location
from nexmark.storage.s3 import S3Url
from nexmark.workload.sizes import parse_count

# --- parsers: (text, flag) -> value; a bad text is one UsageError line naming the flag ---

_RATE = re.compile(r"^\s*([+-]?[0-9_]*\.?[0-9_]+(?:[eE][+-]?[0-9]+)?)\s*([kKmMgG]?)\s*$")
_RATE_SUFFIXES = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9}


def parse_rate(text: str | float, flag: str) -> float:
    """Events per second: '100K', '2.5M', '1e5', '0.5' -> a float (K, M, G: powers of 1000).

    Only the form is checked; whether the rate is above 0 is the option object's check, so
    '-3' parses and is refused there with the flag's own words.
    """
    if isinstance(text, int | float):
        return float(text)
    match = _RATE.match(str(text))
    rate = math.nan
    if match:
        number, suffix = match.groups()
        with contextlib.suppress(InvalidOperation):
            rate = float(Decimal(number.replace("_", "")) * _RATE_SUFFIXES[suffix.upper()])
    if not math.isfinite(rate):
        raise UsageError(f"{flag}: not a rate in events/s: {text!r} (examples: 100K, 2.5M, 500)")
    return rate


def parse_duration(text: str | float, flag: str) -> float:
    """Seconds from '90s', '10m', '10 min', '2h', '500ms'; a plain number is seconds."""
    return parse_seconds(str(text), flag)


def parse_int(text: str | int, flag: str) -> int:
    """A whole number as written ('8', '-1'): no suffix, no fraction."""
    try:
        return int(str(text).strip().replace("_", ""))
    except ValueError:
        raise UsageError(f"{flag}: not a whole number: {text!r}") from None


def parse_float(text: str | float, flag: str) -> float:
    """A plain number ('0.75', '1e-3')."""
    try:
        value = float(str(text).strip())
    except ValueError:
        raise UsageError(f"{flag}: not a number: {text!r}") from None
    if not math.isfinite(value):
        raise UsageError(f"{flag}: not a number: {text!r}")
    return value


# --- building options: the flag's name is given once, to the option and to its parser ---


def option(
    flag: str,
    *aliases: str,
    parse: Callable[[Any, str], Any] | None = None,
    **typer_args: Any,
) -> Any:
    """A `typer.Option` for `flag` whose value goes through `parse(text, flag)` (None: Typer's
    own conversion, for text, paths and switches)."""
    if parse is not None:
        typer_args["parser"] = lambda text: parse(text, flag)
    return typer.Option(flag, *aliases, **typer_args)


def _checkpoint_interval(bounded: bool) -> Callable[[Any, str], float | None]:
    # The protocol's own check: the 30 s bound (cleared for verify) and its message.
    return lambda text, _flag: parse_checkpoint_interval(str(text), bounded=bounded)


# What the suite-driven commands (run, sustainable) show as the default of what a suite sets.
_SUITES = "the suite's"
_SETTINGS = "from the settings"
_DURATION = "a duration: 90s, 10m, 2h, 500ms (a plain number is seconds)"

# --- the dataset ---

_EVENTS_HELP = "Dataset size in events: 200M, 1.5K, 1e6 (K, M, G: thousands, millions, billions)."
Events = Annotated[
    int, option("--events", "-n", parse=parse_count, metavar="COUNT", help=_EVENTS_HELP)
]
SuiteEvents = Annotated[
    int | None,
    option(
        "--events",
        "-n",
        parse=parse_count,
        metavar="COUNT",
        help=_EVENTS_HELP,
        show_default=_SUITES,
    ),
]
EventRate = Annotated[
    int,
    option(
        "--event-rate",
        parse=parse_count,
        metavar="COUNT",
        help="Events per second of event time, e.g. 100K (the dataset's, not a feeding rate).",
    ),
]
WarmupFraction = Annotated[
    float,
    option(
        "--warmup-fraction",
        parse=parse_float,
        metavar="SHARE",
        help="Share of the events in the warm-up part, between 0 and 1.",
    ),
]
Seed = Annotated[
    int, option("--seed", parse=parse_int, metavar="N", help="Seed of the generated dataset.")
]
Format = Annotated[
    str,
    option("--format", metavar="FORMAT", help="Dataset files: parquet, or csv (the same events)."),
]

# --- what runs, and where ---

_QUERIES_HELP = "'all' (q0..q23), 'cep' (cep0..cep3) or a list like q0,q5,cep1."
Queries = Annotated[str, option("--queries", "-q", metavar="QUERIES", help=_QUERIES_HELP)]
SuiteQueries = Annotated[
    str | None,
    option("--queries", "-q", metavar="QUERIES", help=_QUERIES_HELP, show_default=_SUITES),
]
Suite = Annotated[
    str,
    option(
        "--suite",
        metavar="SUITE",
        help="full (200M events, q0..q23), quick (10M, 4 queries) or cep (20M, cep0..cep3).",
    ),
]
Engine = Annotated[
    str,
    option(
        "--engine",
        metavar="ENGINE",
        help="The engine: flink or spark (`nexmark engines` lists those installed).",
    ),
]
Parallelism = Annotated[
    int | None,
    option(
        "--parallelism",
        parse=parse_int,
        metavar="N",
        help="Job parallelism and source readers, one dataset file each per part.",
        show_default=f"{_SETTINGS}, = cores",
    ),
]

# --- the protocol ---

_CHECKPOINT_HELP = f"Periodic checkpoints, {_DURATION}"
CheckpointInterval = Annotated[
    float | None,
    option(
        "--checkpoint-interval",
        parse=_checkpoint_interval(bounded=True),
        metavar="DURATION",
        help=f"{_CHECKPOINT_HELP}; at most 30 s.",
        show_default=f"{_SETTINGS}, 30 s",
    ),
]
# verify's phases last seconds: no 30 s bound, and a short default with --failover.
VerifyCheckpointInterval = Annotated[
    float | None,
    option(
        "--checkpoint-interval",
        parse=_checkpoint_interval(bounded=False),
        metavar="DURATION",
        help=f"{_CHECKPOINT_HELP}; with --failover 1 s, since its kill waits for one in the "
        "benchmark phase.",
        show_default=_SETTINGS,
    ),
]
StateTtl = Annotated[
    str | None,
    option(
        "--state-ttl",
        metavar="DURATION",
        help="State TTL for every query, e.g. '5 min'.",
        show_default=_SETTINGS,
    ),
]
Timeout = Annotated[
    float,
    option(
        "--timeout",
        parse=lambda text, flag: parse_timeout(str(text)),
        metavar="DURATION",
        help=f"Time limit per query, both phases (sustainable: per trial), {_DURATION}.",
    ),
]
Failover = Annotated[
    bool,
    option(
        "--failover/--no-failover",
        help="Kill a worker of each query in its benchmark phase (docs/failover.md).",
    ),
]
Profile = Annotated[
    bool,
    option(
        "--profile/--no-profile",
        help="A CPU profile of each query's scored phases: a flame graph per query in "
        "profiles/ of the results (docs/profiling.md).",
    ),
]
KeepCheckpoints = Annotated[
    bool,
    option(
        "--keep-checkpoints/--no-keep-checkpoints",
        help="Keep checkpoints and work files (scratch files, verify's collected rows).",
    ),
]

# --- an object store (docs/object-store.md) ---

Data = Annotated[
    str | None,  # text (a Path folds s3://b into s3:/b), parsed once where a command takes it
    option(
        "--data",
        "--out",  # generate's first spelling
        "-o",
        metavar="DIR",
        help="The dataset's folder or s3://bucket/prefix, found or generated there (default: "
        "a cache dir keyed by the parameters).",
    ),
]
Checkpoints = Annotated[
    str | None,
    option(
        "--checkpoints",
        metavar="URL",
        help="s3://bucket/prefix for the checkpoints and the phase snapshot (default: the "
        "run's local work directory).",
    ),
]
S3Local = Annotated[
    bool,
    option(
        "--s3-local/--no-s3-local",
        help="Start a local S3 (s3proxy on loopback) for the run's s3:// locations, unless an "
        "endpoint is configured (AWS_ENDPOINT_URL).",
    ),
]


@contextlib.contextmanager
def s3_local_store(
    enabled: bool, data: Location | None, checkpoints: S3Url | None
) -> Iterator[None]:
    """What --s3-local does around a command (`storage.local_store`), its one line shown; the
    locations as the command's `RunOptions` hold them (parsed once, there)."""
    from nexmark.console import err
    from nexmark.storage.local_store import local_store

    with local_store(enabled, [data, checkpoints]) as note:
        if note:
            err.print(note)
        yield


# --- feeding at a rate ---

Rate = Annotated[
    float | None,
    option(
        "--rate",
        parse=parse_rate,
        metavar="RATE",
        help="Feed the benchmark part at this many events/s on the wall clock, e.g. 100K (the "
        "warm-up at full speed); the benchmark part gets time slices of 100 ms at that rate.",
    ),
]
MinRate = Annotated[
    float,
    option(
        "--min-rate",
        parse=parse_rate,
        metavar="RATE",
        help="The lowest rate tried, events/s, e.g. 50K: the benchmark part's time slices "
        "hold 100 ms of events at it.",
    ),
]

# --- settings and results ---

Overrides = Annotated[
    list[str],
    option(
        "--set",
        metavar="KEY=VALUE",
        help="Engine option SECTION.KEY=VALUE, e.g. flink.state.backend.type=hashmap (repeatable).",
    ),
]
Config = Annotated[
    Path | None,
    option("--config", metavar="FILE", help="A TOML file overriding the recommended setup."),
]
Results = Annotated[
    Path | None,
    option(
        "--results",
        metavar="DIR",
        help="Results directory.",
        show_default="results/<run-id>",
    ),
]
Report = Annotated[
    bool, option("--report/--no-report", help="Write report.html and charts at the end.")
]

# --- where the events come from (docs/kafka.md) ---

Source = Annotated[
    str,
    option(
        "--source",
        metavar="files|kafka",
        help="Read the dataset's parts from its files, or from Kafka topics (loaded once by "
        "the run, or by nexmark load; an embedded broker unless --kafka-bootstrap).",
    ),
]
KafkaBootstrap = Annotated[
    str | None,
    option(
        "--kafka-bootstrap",
        metavar="HOST:PORT",
        help="Your own Kafka cluster (default: an embedded broker, started and stopped by this "
        "command).",
    ),
]
KafkaDir = Annotated[
    Path | None,
    option(
        "--kafka-dir",
        metavar="DIR",
        help="The embedded broker's directory, its topics kept there between runs.",
        show_default="$NEXMARK_KAFKA_DIR or ~/.cache/nexmark/kafka",
    ),
]
