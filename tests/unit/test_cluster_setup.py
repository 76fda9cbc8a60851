"""A cluster's setup and cores, without a cluster: the workers a result records (schema 10 and
the upgrade from 9), and a remote Flink's CPU total keeping a TaskManager that died."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from nexmark.engines.flink.cpu import CPU_METRIC, RemoteCpu, workers
from nexmark.errors import EngineError
from nexmark.results.codec import ResultsError
from nexmark.results.document import SCHEMA_VERSION, dump_document, load_document
from nexmark.results.setup import Worker, workers_line

DATA = Path(__file__).parents[1] / "data" / "constructed" / "quick-base" / "results.json"


def _doc(version: int) -> dict:
    doc = json.loads(DATA.read_text())
    doc["schema_version"] = version
    return doc


def test_a_version_9_file_loads_with_no_workers_and_workers_round_trip():
    assert SCHEMA_VERSION >= 10  # the workers came with version 10
    results = load_document(_doc(9))
    assert results and all(r.setup.workers == [] for r in results)
    results[0].setup.workers = [
        Worker("tm-1", "taskmanager", "host-a", 1, 8, 1 << 30),
        Worker("3", "executor", "host-b", 2, None, 500 << 20, removed="worker lost"),
    ]
    doc = dump_document(results)
    back = load_document(copy.deepcopy(doc))
    assert back[0].setup.workers == results[0].setup.workers
    assert dump_document(back) == doc


def test_a_worker_with_an_unknown_field_is_one_error_naming_it():
    doc = dump_document(load_document(_doc(9)))
    doc["results"][0]["setup"]["workers"] = [{"id": "tm-1", "slot": 1}]
    with pytest.raises(ResultsError, match=r"setup\.workers\[0\]: unknown field\(s\) slot"):
        load_document(doc)


def test_the_workers_line_names_each_one():
    line = workers_line(
        [Worker("tm-1", "taskmanager", "a", 1, 2, 1 << 30), Worker("tm-2", host="b", slots=2)]
    )
    assert line == "2 workers: tm-1 (a, 1 slot, 1.0 GiB), tm-2 (b, 2 slots)"


class _Rest:
    """Flink's REST API as RemoteCpu and workers read it: TaskManagers that can die."""

    def __init__(self) -> None:
        self.cpu_ns = {"jobmanager": 1e9, "tm-1": 2e9, "tm-2": 3e9}
        self.alive = {"tm-1", "tm-2"}

    def get(self, path: str, **params: str) -> object:
        if path == "/taskmanagers":
            return {
                "taskmanagers": [
                    {
                        "id": tm,
                        "path": f"pekko.tcp://flink@host-{tm}:6122/user/rpc/taskmanager_0",
                        "slotsNumber": 1,
                        "hardware": {"cpuCores": 4},
                        "memoryConfiguration": {"totalProcessMemory": 1 << 30},
                    }
                    for tm in sorted(self.alive)
                ]
            }
        process = "jobmanager" if path.startswith("/jobmanager") else path.split("/")[2]
        if process != "jobmanager" and process not in self.alive:
            raise EngineError(f"{path}: 404")
        assert params == {"get": CPU_METRIC}
        return [{"id": CPU_METRIC, "value": str(self.cpu_ns[process])}]


def test_remote_cpu_keeps_what_a_dead_taskmanager_used():
    rest = _Rest()
    cpu = RemoteCpu(rest)
    assert cpu.seconds() == pytest.approx(6.0)
    rest.cpu_ns.update({"tm-1": 5e9, "jobmanager": 1.5e9})
    rest.alive.discard("tm-1")  # killed after its 5 s: no longer listed
    rest.cpu_ns["tm-2"] = 4e9
    assert cpu.seconds() == pytest.approx(1.5 + 2.0 + 4.0)  # tm-1 as last read
    rest.alive.add("tm-3")  # its replacement adds to the total
    rest.cpu_ns["tm-3"] = 0.5e9
    assert cpu.seconds() == pytest.approx(1.5 + 2.0 + 4.0 + 0.5)


def test_workers_are_every_taskmanager_with_host_slots_and_memory():
    found = workers(_Rest())
    assert [w.id for w in found] == ["tm-1", "tm-2"]
    assert found[0] == Worker("tm-1", "taskmanager", "host-tm-1", 1, 4, 1 << 30)


def test_compare_and_the_report_show_the_workers():
    from nexmark.report.fairness import setup_differences
    from nexmark.report.html import _setup_section

    base = load_document(_doc(9))[:1]
    new = copy.deepcopy(base)
    new[0].setup.workers = [Worker("tm-1", "taskmanager", "a", 1)]
    assert setup_differences(base, new) == ["setup.workers: (unset) -> 1 worker: tm-1 (a, 1 slot)"]
    assert setup_differences(base, new, across_engines=True) == []
    assert "1 worker: tm-1 (a, 1 slot)" in _setup_section(new)
    assert "worker" not in _setup_section(base)
