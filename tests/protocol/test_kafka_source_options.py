"""--source kafka on the protocol's side, without a broker or an engine: the refusals (one line
each, before anything is made), the phase source each job gets, and the restore proof on
offsets against a job that reports them."""

from __future__ import annotations

from pathlib import Path

import pytest

from fake_engine import FakeEngine, FakeWorld
from nexmark.engines.base import Job
from nexmark.engines.source import FileSource, KafkaSource
from nexmark.errors import UsageError
from nexmark.protocol.preparation.checks import check_capabilities, job_spec
from nexmark.protocol.preparation.kafka import KafkaParts
from nexmark.protocol.preparation.options import RunOptions
from nexmark.protocol.preparation.parts import PhaseParts
from nexmark.protocol.query import proofs
from nexmark.results.document import SCHEMA_VERSION, load_document


def _options(**given) -> RunOptions:
    return RunOptions(queries=("q5",), events=10_000, **given)


def test_an_engine_that_reads_files_only_refuses_kafka_in_one_line() -> None:
    engine = FakeEngine(FakeWorld())
    with pytest.raises(UsageError, match=r"^--source kafka: .* reads only files$"):
        check_capabilities(engine, _options(source="kafka"))
    check_capabilities(engine, _options())  # files: fine


@pytest.mark.parametrize(
    "given, words",
    [
        (dict(rate=10_000), "releasing a topic's offsets on a clock is not built"),
        (dict(failover=True), "--failover with --source kafka"),
        (dict(source="s3"), "--source must be one of files, kafka"),
    ],
)
def test_what_kafka_cannot_do_is_refused(given: dict, words: str) -> None:
    source = given.pop("source", "kafka")
    with pytest.raises(UsageError, match=words):
        _options(source=source, **given)


def _topic(part: str, counts: tuple[int, ...]) -> KafkaSource:
    return KafkaSource("127.0.0.1:9092", f"nexmark-x-{part}", part, len(counts), counts, "x")


def _kafka() -> KafkaParts:
    parts = KafkaParts(cluster=None, bootstrap="127.0.0.1:9092")  # type: ignore[arg-type]
    parts.sources = {"warmup": _topic("warmup", (5, 4)), "benchmark": _topic("benchmark", (2, 1))}
    return parts


def test_each_phase_reads_its_parts_topic(tmp_path: Path) -> None:
    options, topics = _options(source="kafka"), _kafka()
    # Folders named unlike their parts: the part is what the caller names, not a folder's name.
    parts = PhaseParts(tmp_path / "ds" / "a", tmp_path / "ds" / "b", 9, 3)
    warm = job_spec("q5", options, parts.source("warmup", topics), tmp_path)
    bench = job_spec("q5", options, parts.source("benchmark", topics), tmp_path)
    ceiling = job_spec("q5", options, parts.source("benchmark", topics), tmp_path, source_only=True)
    assert warm.source.topic == "nexmark-x-warmup"
    assert bench.source.topic == ceiling.source.topic == "nexmark-x-benchmark"
    # Before the load (planning) and from files: the part's folder.
    planned = job_spec("q5", _options(source="kafka"), parts.source("benchmark"), tmp_path)
    assert isinstance(planned.source, FileSource)
    assert planned.source.location == tmp_path / "ds" / "b"
    with pytest.raises(ValueError, match="no dataset part 'restore'"):
        parts.source("restore")


class _OffsetsJob(Job):
    """A job whose offsets show after `late` asks (a checkpoint's commit is asynchronous)."""

    def __init__(self, offsets: dict[str, list[int]] | None, late: int = 0) -> None:
        self.offsets, self.late, self.asked = offsets, late, 0
        self.id = "offsets"

    def source_offsets(self):
        self.asked += 1
        if self.offsets is None:
            return None
        return self.offsets if self.asked > self.late else {}

    def status(self):  # pragma: no cover - not called by the proof
        raise NotImplementedError

    def events_emitted(self) -> int:  # pragma: no cover
        return 0

    def trigger_checkpoint(self, timeout_s):  # pragma: no cover
        raise NotImplementedError

    def checkpoints(self):  # pragma: no cover
        return []

    def restored_from(self):  # pragma: no cover
        return None

    def cancel(self) -> None:  # pragma: no cover
        pass


class _Waits:
    def __init__(self) -> None:
        self.now = 0.0

    def clock(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.now += s

    def alive(self, job) -> None:
        pass


def test_the_offsets_proof_passes_fails_or_is_not_proven() -> None:
    expected = {"nexmark-x-warmup": [5, 4]}
    late = _OffsetsJob({"nexmark-x-warmup": [5, 4], "other": [1]}, late=3)
    assert proofs.check_offsets(late, expected, _Waits(), "the phase checkpoint") is True
    assert late.asked == 4  # waited for the commit to show
    wrong = r"offsets on nexmark-x-warmup are \[5, 3\]"
    with pytest.raises(proofs.SourceOffsetsError, match=wrong):
        proofs.check_offsets(
            _OffsetsJob({"nexmark-x-warmup": [5, 3]}), expected, _Waits(), "the phase checkpoint"
        )
    assert proofs.check_offsets(_OffsetsJob(None), expected, _Waits(), "x") is False
    assert proofs.offsets_verdict(True, True).startswith("proved")
    assert proofs.offsets_verdict(True, False).startswith("not proven")
    assert proofs.offsets_verdict(None, None) is None


def test_a_version_9_results_file_reads_as_read_from_files() -> None:
    assert SCHEMA_VERSION >= 11  # the Kafka fields came with version 11
    record = {"run_id": "r", "engine": "flink", "query": "q0", "status": "ok", "cores": 1.5}
    (result,) = load_document({"schema_version": 9, "results": [record]})
    assert result.cores == 1.5 and result.source_cores is None and result.source_offsets is None


def test_the_table_shows_the_brokers_cores_beside_the_engines_for_kafka_only() -> None:
    from nexmark.results.query_result import QueryResult
    from nexmark.results.table import kafka_line, summary_columns, totals

    def result(query: str, **more) -> QueryResult:
        return QueryResult(
            "r", "flink", query, "ok", time_s=2.0, events_benchmark=100, cores=1.0, **more
        )

    files = [result("q0")]
    kafka = [
        result("q0", source_cores=0.2, source_offsets="proved: x"),
        result("q5", source_cores=None, source_offsets="proved: x"),  # a user's cluster
    ]
    titles = [c.title for c in summary_columns(kafka)]
    assert titles[titles.index("Cores") + 1] == "Broker Cores"
    assert "Broker Cores" not in [c.title for c in summary_columns(files)]
    assert kafka_line(files) is None and "offsets proved: x" in kafka_line(kafka)
    assert totals(kafka)["source_cores"] == pytest.approx(0.2)  # the measured one only
