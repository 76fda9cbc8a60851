"""The phase checkpoint outlives the warm-up job's later checkpoints, whatever the interval.

Flink deletes a retained checkpoint once `execution.checkpointing.num-retained` (3, packaged)
newer checkpoints of its job have completed. With a short `--checkpoint-interval`, periodic
checkpoints completed between the cut and the warm-up job's cancel did that, and the restore
found no phase checkpoint. Here a short interval runs through the cut, and more checkpoints
than are retained complete after it, every time."""

from __future__ import annotations

import pytest

from nexmark.engines.base import CheckpointStatus
from nexmark.protocol.preparation.options import ProtocolOptions
from nexmark.protocol.preparation.parts import PhaseParts
from nexmark.protocol.progress.display import RunDisplay
from nexmark.protocol.query.query_run import QueryRun

pytestmark = [pytest.mark.flink, pytest.mark.slow]

RETAINED = 3  # the packaged execution.checkpointing.num-retained


class CheckpointsAfterTheCut(QueryRun):
    """The warm-up job completes more checkpoints than are retained after the phase
    checkpoint, before its cancel (the hook runs between the two, before the logical size)."""

    later: list[int]  # every checkpoint the warm-up job completed after the cut

    def _logical_state(self, job, checkpoint):
        if job.restored_from() is None:  # the warm-up job
            for _ in range(RETAINED + 1):
                job.trigger_checkpoint(60)
            self.later = [
                c.id
                for c in job.checkpoints()
                if c.id > checkpoint.id and c.status is CheckpointStatus.COMPLETED
            ]
        return super()._logical_state(job, checkpoint)


def test_restores_the_cut_after_more_checkpoints_than_are_retained(
    flink_engine, small_dataset, tmp_path
):
    parts = PhaseParts.of(small_dataset)
    opts = ProtocolOptions(checkpoint_interval_s=0.2, timeout_s=240, repeat=2)
    run = CheckpointsAfterTheCut(
        flink_engine, "q5", parts, tmp_path / "work", opts, RunDisplay(1, enabled=False)
    )
    measured = run.execute()

    cut = measured.phase_checkpoint
    assert cut is not None and cut.snapshot is not None
    assert len(run.later) > RETAINED  # enough to have subsumed a retained checkpoint
    # Still a measured phase checkpoint: its duration and sizes are reported.
    assert cut.duration_s is not None and cut.state_bytes
    repeats = measured.repeats
    assert [r.status for r in repeats] == ["ok", "ok"], [r.reason for r in repeats]
    for repeat in repeats:
        m = repeat.measured
        assert m.restored_id == cut.id and m.restored_from == cut.snapshot.ref
        assert m.benchmark_events_seen == parts.benchmark_events
