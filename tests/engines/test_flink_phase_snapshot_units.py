"""The Flink job's phase checkpoint without a JVM: a native savepoint beside the job's
checkpoints, after one checkpoint where the job acts on a checkpoint's notice, or the job
stopped at it (a REST stand-in; the real ones: test_flink_phase_snapshot.py,
test_flink_stop_at_cut.py)."""

from __future__ import annotations

from nexmark.engines.checkpoints import CheckpointStatus, Snapshot
from nexmark.engines.flink.job import FlinkJob
from nexmark.engines.spec import JobSetup

JOB = "j1"
SAVEPOINT = f"file:/ck/{JOB}/phase/savepoint-j1-abc"
STOP_BODY = {"targetDirectory": f"file:/ck/{JOB}/phase", "drain": False, "formatType": "NATIVE"}


class Rest:
    """Answers a checkpoint (id 5) and a savepoint (id 6, or a stop at it) as Flink's REST
    API does; notes each trigger (what, body). A stopped job is FINISHED."""

    def __init__(self) -> None:
        self.triggers: list[tuple[str, dict | None]] = []

    def post(self, path: str, body: dict | None = None) -> dict:
        kind = path.rsplit("/", 1)[1]
        self.triggers.append((kind, body))
        return {"request-id": kind}

    def get(self, path: str, **params: str) -> dict:
        done = {"id": "COMPLETED"}
        if path == f"/jobs/{JOB}/checkpoints/checkpoints":
            return {"status": done, "operation": {"checkpointId": 5}}
        if path in (f"/jobs/{JOB}/savepoints/savepoints", f"/jobs/{JOB}/savepoints/stop"):
            return {"status": done, "operation": {"location": SAVEPOINT}}
        if path == f"/jobs/{JOB}" and ("stop", STOP_BODY) in self.triggers:
            return {"state": "FINISHED"}
        if path == f"/jobs/{JOB}/checkpoints/details/5":
            return entry(5, f"file:/ck/{JOB}/chk-5")
        if path == f"/jobs/{JOB}/checkpoints":
            return {"history": [entry(6, SAVEPOINT, is_savepoint=True)]}
        raise AssertionError(f"unexpected GET {path}")


def entry(checkpoint_id: int, path: str, is_savepoint: bool = False) -> dict:
    return {
        "id": checkpoint_id,
        "status": "COMPLETED",
        "is_savepoint": is_savepoint,
        "trigger_timestamp": 1_700_000_000_000,
        "latest_ack_timestamp": 1_700_000_000_400,
        "end_to_end_duration": 400,
        "checkpointed_size": 100,
        "state_size": 100,
        "external_path": path,
    }


def job(rest: Rest, **kw) -> FlinkJob:
    submitted = FlinkJob(rest, JOB, lambda: None, **kw)
    submitted.setup = JobSetup(2, 0.2, None, {"execution.checkpointing.dir": "file:/ck/"})
    return submitted


def test_the_cut_is_a_native_savepoint_beside_the_checkpoints():
    rest = Rest()
    cut = job(rest).trigger_phase_checkpoint(10)
    target = {"target-directory": f"file:/ck/{JOB}/phase", "cancel-job": False}
    assert rest.triggers == [("savepoints", {**target, "formatType": "NATIVE"})]
    assert (cut.id, cut.status, cut.duration_s) == (6, CheckpointStatus.COMPLETED, 0.4)
    assert cut.snapshot == Snapshot(6, SAVEPOINT) and cut.state_bytes == 100


def test_a_job_acting_on_a_checkpoints_notice_takes_one_first(tmp_path):
    for kw in ({"collect_dir": tmp_path}, {"reads_kafka": True}):
        rest = Rest()
        submitted = job(rest, **kw)
        cut = submitted.trigger_phase_checkpoint(10)
        assert [kind for kind, _ in rest.triggers] == ["checkpoints", "savepoints"], kw
        assert cut.id == 6
        assert [c.id for c in submitted.checkpoints()] == [5, 6]  # the savepoint stays listed


def test_a_job_stopped_at_the_cut_takes_a_synchronous_savepoint_and_no_checkpoint(tmp_path):
    """Stopped, the job completes no checkpoint after the savepoint, and the savepoint's own
    notice commits what the sinks hold: no checkpoint first, even for a COLLECT job."""
    rest = Rest()
    submitted = job(rest, collect_dir=tmp_path)
    cut = submitted.trigger_phase_checkpoint(10, stop=True)
    assert rest.triggers == [("stop", STOP_BODY)]
    assert cut.snapshot == Snapshot(6, SAVEPOINT) and cut.duration_s == 0.4
    assert submitted.status().state.terminal  # returned once the job had finished
