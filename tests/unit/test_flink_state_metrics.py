"""Flink's live state from its backend's native metrics: options, names, sums (no JVM)."""

from __future__ import annotations

import pytest

from nexmark.engines.flink.options import job_options
from nexmark.engines.flink.state_metrics import LiveStateReader, live_state, metric_options
from nexmark.engines.spec import JobSpec
from nexmark.errors import UsageError
from nexmark.settings import Settings

PROPS = ("estimate-live-data-size", "estimate-num-keys", "total-sst-files-size",
         "cur-size-all-mem-tables")  # fmt: skip


def test_the_runner_turns_on_the_metrics_of_the_backend_in_use(tmp_path):
    rocks = metric_options({"state.backend.type": "rocksdb"})
    assert rocks == {f"state.backend.rocksdb.metrics.{p}": "true" for p in PROPS}
    forst = metric_options({"state.backend.type": "ForSt"})
    assert forst == {f"state.backend.forst.metrics.{p}": "true" for p in PROPS}
    assert metric_options({"state.backend.type": "hashmap"}) == {}
    assert metric_options({}) == {}  # Flink's default backend: the heap
    # A metric the settings turn off stays off (how its cost is measured).
    off = "state.backend.rocksdb.metrics.estimate-num-keys"
    assert off not in metric_options({"state.backend.type": "rocksdb", off: "false"})
    # And the job is submitted, and recorded, with them.
    spec = JobSpec("q20", tmp_path, tmp_path)
    options = job_options(Settings.load(overrides=[f"flink.{off}=false"]), spec)
    assert options[off] == "false"
    assert options["state.backend.rocksdb.metrics.estimate-live-data-size"] == "true"


def test_an_unknown_state_backend_is_one_line(tmp_path):
    with pytest.raises(UsageError, match="'rockdb' is no state backend Flink knows"):
        metric_options({"state.backend.type": "rockdb"})
    # A factory class is Flink's to load.
    assert metric_options({"state.backend.type": "com.example.MyBackendFactory"}) == {}


def test_live_bytes_are_the_live_files_plus_the_unflushed_memtables():
    state = live_state({"estimate-live-data-size": 100.0, "cur-size-all-mem-tables": 20.0,
                        "estimate-num-keys": 7.0, "total-sst-files-size": 300.0})  # fmt: skip
    assert (state.bytes, state.keys, state.files_bytes, state.memory_bytes) == (120, 7, 300, 20)
    assert live_state({}) is None
    assert live_state({"estimate-num-keys": 3.0}).bytes is None  # no live-data metric: no bytes


class _Rest:
    """A job's REST metrics: two vertices, one without state; counts requests."""

    def __init__(self) -> None:
        self.names = {"v1": ["0.numRecordsIn"], "v2": []}
        self.values: dict[str, float] = {}
        self.requests = 0

    def __call__(self, path: str, get: str | None = None, agg: str | None = None):
        self.requests += 1
        vertex = path.split("/")[4]
        if get is None:
            return [{"id": n} for n in self.names[vertex]]
        return [{"id": n, "sum": self.values[n]} for n in get.split(",") if n in self.values]


def test_the_reader_finds_gauges_as_states_appear_and_sums_them():
    rest, now = _Rest(), [0.0]
    reader = LiveStateReader(rest, "job", lambda: ["v1", "v2"], clock=lambda: now[0])
    assert reader.read() is None  # no state registered yet
    # A join registers two states on v2; RocksDB names them per state (column family).
    left = "Join[4].left-records.rocksdb_"
    right = "Join[4].right-records.rocksdb_"
    rest.names["v2"] = [left + p for p in PROPS] + [right + p for p in PROPS] + ["0.busy"]
    rest.values = {
        left + "estimate-live-data-size": 1000.0,
        right + "estimate-live-data-size": 500.0,
        left + "estimate-num-keys": 10.0,
        right + "estimate-num-keys": float("nan"),
        left + "cur-size-all-mem-tables": 64.0,
    }
    now[0] = 1.0  # in the job's first 15 s the names are listed at every read
    state = reader.read()
    assert state.bytes == 1000 + 500 + 64 and state.keys == 10  # NaN (not reported) left out
    # After that, only every 5 s: a state that appears on v1 now is seen at the next listing.
    now[0] = 16.0
    reader.read()
    rest.names["v1"] = ["Agg[2].acc.rocksdb_estimate-num-keys"]
    rest.values["Agg[2].acc.rocksdb_estimate-num-keys"] = 5.0
    before = rest.requests
    now[0] = 17.0
    assert reader.read().keys == 10
    assert rest.requests - before == 1  # one request per stateful vertex between listings
    now[0] = 21.0
    assert reader.read().keys == 15
