"""`--source kafka` refused in one line before anything is made: a cluster that does not
answer, and what Kafka cannot do yet (no broker, no engine started). In process: no work, no
Python start per case."""

from __future__ import annotations

from pathlib import Path

import pytest

from nexmark.processes import free_port


@pytest.mark.parametrize("command", ["run", "verify"])
def test_an_unreachable_kafka_bootstrap_is_one_line_before_any_data(
    command: str, tmp_path: Path, nexmark_main
) -> None:
    port = free_port()  # nothing listens there
    results = ["--results", str(tmp_path / "res")] if command == "run" else []
    done = nexmark_main(
        command, "-q", "q0", "--events", "10K", "--source", "kafka",
        "--kafka-bootstrap", f"127.0.0.1:{port}", *results, data=tmp_path / "data",
    )  # fmt: skip
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert lines == [f"error: Kafka broker at 127.0.0.1:{port} not reachable (no TCP answer)"]
    assert not (tmp_path / "data").exists()  # checked before the dataset was made
    assert not (tmp_path / "res").exists()


def test_rate_with_kafka_says_why_not(tmp_path: Path, nexmark_main) -> None:
    done = nexmark_main(
        "run", "-q", "q0", "--events", "10K", "--source", "kafka", "--rate", "10K",
        data=tmp_path / "data",
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "error: --rate with --source kafka: the rate feed releases a part's files on a clock; "
        "releasing a topic's offsets on a clock is not built (read Kafka at full speed)"
    )
