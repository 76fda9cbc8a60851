"""A checkpoint that completes after the phase checkpoint, before the warm-up job's cancel,
must not break the restore of a job writing latency stamps.

Flink's file sink with auto-compaction deletes the `.uncompacted-*` files a checkpoint names
once a later checkpoint of the same job completes; a periodic checkpoint between the phase
checkpoint and the cancel did that by chance (a short `--checkpoint-interval`, a loaded
machine), and the restored job failed with a FileNotFoundException. Here the interleaving is
forced: two more checkpoints complete before the cancel, every time."""

from __future__ import annotations

import pytest

from nexmark.protocol.preparation.options import ProtocolOptions
from nexmark.protocol.preparation.parts import PhaseParts
from nexmark.protocol.progress.display import RunDisplay
from nexmark.protocol.query.query_run import QueryRun
from nexmark.workload.dataset import DatasetParams
from nexmark.workload.feed import rate_slices
from nexmark.workload.writer import ensure_dataset

pytestmark = [pytest.mark.flink, pytest.mark.slow]

BENCH = 10_000
RATE = 5_000.0  # a 2 s benchmark phase


class CheckpointsAfterTheCut(QueryRun):
    """The warm-up job goes on after the phase checkpoint, as one reading Kafka does (one
    writing files and asked nothing more stops at it: test_flink_stop_at_cut.py), and
    completes two more checkpoints before its cancel: what a periodic checkpoint does when it
    falls in that window. (The hook runs between the two; the logical size is not measured
    for a job writing stamps anyway.)"""

    later: list[int]

    def stops_at_cut(self) -> bool:
        return False

    def _logical_state(self, job, checkpoint):
        if job.restored_from() is None:  # the warm-up job
            # The second completes once the first's completion notice has reached the sink
            # (its barrier follows it), so the deletions that notice makes are done.
            self.later = [job.trigger_checkpoint(60).id for _ in range(2)]
            assert min(self.later) > checkpoint.id
        return None


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    params = DatasetParams(
        events=4 * BENCH, files=2, rate=1_000, benchmark_slices=rate_slices(BENCH, RATE)
    )
    root = tmp_path_factory.mktemp("stamps-restore")
    return ensure_dataset(params, out=root / params.dataset_id, show_progress=False)


def test_restores_after_a_later_checkpoint_of_the_warmup(flink_engine, dataset, tmp_path):
    parts = PhaseParts.of(dataset)
    # Every bid stamped, so the warm-up's sink holds files up to its last event; no periodic
    # checkpoint in the way (30 s); two repeats of the one phase checkpoint.
    opts = ProtocolOptions(
        checkpoint_interval_s=30.0, timeout_s=240, rate=RATE, latency_sample=1.0, repeat=2
    )
    run = CheckpointsAfterTheCut(
        flink_engine, "q0", parts, tmp_path / "work", opts, RunDisplay(1, enabled=False)
    )
    measured = run.execute()

    assert len(run.later) == 2
    repeats = measured.repeats
    assert [r.status for r in repeats] == ["ok", "ok"], [r.reason for r in repeats]
    counts = [len(r.measured.benchmark.latency or []) for r in repeats]
    # every bid of the benchmark part stamped once in each repeat: no repeat sees another's
    # stamps, none is lost (q0: a row per bid; bids are 46 of every 50 events)
    assert counts[0] == counts[1], counts
    assert 0.85 * BENCH < counts[0] < BENCH, counts
