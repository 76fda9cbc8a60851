"""The command line's parsers (cli/options.py): counts, rates and durations with suffixes, plain
numbers in today's units, and one-line errors that name the flag."""

from __future__ import annotations

import pytest

from nexmark.cli.options import (
    parse_count,
    parse_duration,
    parse_float,
    parse_int,
    parse_rate,
)
from nexmark.errors import UsageError


@pytest.mark.parametrize(
    ("text", "rate"),
    [
        ("100K", 100_000.0),
        ("100k", 100_000.0),
        ("2.5M", 2_500_000.0),
        ("1G", 1e9),
        ("1.5K", 1_500.0),
        ("1e5", 100_000.0),
        ("1_000", 1_000.0),
        ("500", 500.0),  # a plain number: events/s, as --rate took it before
        ("2.5", 2.5),  # fractions stay (a slow feed of a small dataset)
        (" 50K ", 50_000.0),
        ("-3", -3.0),  # parsed; RunOptions refuses it with the flag's own words
        (100, 100.0),
        (2.5, 2.5),
    ],
)
def test_rates_take_suffixes_and_fractions(text, rate):
    parsed = parse_rate(text, "--rate")
    assert parsed == rate and isinstance(parsed, float)


@pytest.mark.parametrize(
    "text", ["abc", "", "_", "K", "100KK", "100Q", "1.2.3", "inf", "nan", "1e"]
)
def test_a_bad_rate_is_one_line_naming_the_flag(text):
    with pytest.raises(UsageError) as refused:
        parse_rate(text, "--min-rate")
    message = str(refused.value)
    assert message.startswith("--min-rate: not a rate in events/s") and "\n" not in message


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90s", 90.0),
        ("90 s", 90.0),
        ("10m", 600.0),
        ("10min", 600.0),
        ("10 min", 600.0),
        ("2h", 7200.0),
        ("1.5h", 5400.0),
        ("500ms", 0.5),
        ("300", 300.0),  # a plain number is seconds, as verify --timeout took it before
        ("2.5", 2.5),
        (300.0, 300.0),  # a numeric default
    ],
)
def test_durations_take_units_and_plain_seconds(text, seconds):
    assert parse_duration(text, "--timeout") == seconds


@pytest.mark.parametrize("text", ["5x", "", "-1s", "ten seconds", "1h30m", "s"])
def test_a_bad_duration_is_one_line_naming_the_flag(text):
    with pytest.raises(UsageError) as refused:
        parse_duration(text, "--p99-bound")
    message = str(refused.value)
    assert message.startswith("--p99-bound must be a duration") and "\n" not in message


@pytest.mark.parametrize(
    ("text", "count"),
    [("4M", 4_000_000), ("1.5K", 1_500), ("1e6", 1_000_000), ("10_000", 10_000), ("7", 7)],
)
def test_counts_are_whole_numbers_with_suffixes(text, count):
    assert parse_count(text, "--events") == count


@pytest.mark.parametrize(
    ("text", "words"), [("lots", "not a number"), ("1.0005K", "not a whole number")]
)
def test_a_bad_count_is_one_line_naming_the_flag(text, words):
    with pytest.raises(UsageError, match=f"^--events: {words}"):
        parse_count(text, "--events")


def test_whole_numbers_and_plain_numbers():
    assert parse_int("8", "--parallelism") == 8
    assert parse_int("-1", "--workers") == -1  # the range is the option object's to check
    assert parse_int(0, "--seed") == 0
    assert parse_float("0.75", "--warmup-fraction") == 0.75
    assert parse_float(0.5, "--failover-at") == 0.5
    for bad in ("x", "1.5", "4K", ""):
        with pytest.raises(UsageError, match=r"^--parallelism: not a whole number"):
            parse_int(bad, "--parallelism")
    for bad in ("x", "nan", "inf", ""):
        with pytest.raises(UsageError, match=r"^--warmup-fraction: not a number"):
            parse_float(bad, "--warmup-fraction")
