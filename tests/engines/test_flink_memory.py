"""The embedded TaskManager's memory sizing: the arithmetic (no JVM) and what reaches Flink."""

from __future__ import annotations

import pytest

from nexmark.engines.flink import memory, options
from nexmark.engines.spec import JobSpec
from nexmark.errors import UsageError
from nexmark.settings import Settings

MIB = memory.MIB
GIB = memory.GIB


def _sizes(tm: memory.TaskManagerMemory) -> dict[str, int]:
    """The sizes in MiB (every derived size is whole MiB)."""
    names = ("process", "overhead", "flink", "managed", "network", "task_heap", "heap", "direct")
    return {name: getattr(tm, name) / MIB for name in names}


def test_memory_sizes_parse_like_flink():
    assert memory.parse_size("4g") == 4 * GIB
    assert memory.parse_size("128 mb") == 128 * MIB
    assert memory.parse_size("1 GB") == GIB
    assert memory.parse_size("6335076856b") == 6335076856
    assert memory.parse_size("1024") == 1024
    assert memory.parse_size("2 kibibytes") == 2048
    for bad in ("1.5g", "4 parsecs", "", "g"):
        with pytest.raises(UsageError, match="not a memory size"):
            memory.parse_size(bad, "taskmanager.memory.managed.size")
    assert memory.format_size(5916 * MIB) == "5916m"
    assert memory.format_size(MIB + 1) == "1048577b"


def test_machine_budget_is_two_thirds_of_memory_at_most_8_gib_per_slot():
    assert memory.machine_budget(24 * GIB, slots=2) == 16 * GIB  # both limits agree here
    assert memory.machine_budget(24 * GIB, slots=1) == 8 * GIB
    assert memory.machine_budget(24 * GIB, slots=8) == 16 * GIB
    assert memory.machine_budget(25276510208, slots=2) == 16070 * MIB  # this project's machine
    assert memory.machine_budget(4 * GIB, slots=2) == 2730 * MIB  # rounded down to MiB


def test_the_recommended_setup_on_a_24_gib_two_core_machine():
    flink = Settings.defaults().flink_options()
    assert flink["taskmanager.memory.process.size"] == "machine"
    assert flink["taskmanager.memory.network.max"] == "1g"
    tm = memory.size_taskmanager(flink, slots=2, machine_memory=24 * GIB)
    # 16 GiB budget; overhead 10% capped at 1 GiB; metaspace 256 MiB; Flink memory 15104 MiB:
    # managed 40%, network 10% capped at 1 GiB, framework 2 x 128 MiB, the rest task heap.
    assert _sizes(tm) == {
        "process": 16384,
        "overhead": 1024,
        "flink": 15104,
        "managed": 6041,
        "network": 1024,
        "task_heap": 7783,
        "heap": 7911,
        "direct": 1280,  # network + framework off-heap + the JobManager's off-heap
    }
    assert tm.jvm_args() == ["-Xmx7911m", "-XX:MaxDirectMemorySize=1280m"]
    assert tm.cluster_options() == {
        "taskmanager.memory.framework.heap.size": "128m",
        "taskmanager.memory.framework.off-heap.size": "128m",
        "taskmanager.memory.task.heap.size": "7783m",
        "taskmanager.memory.task.off-heap.size": "0m",
        "taskmanager.memory.managed.size": "6041m",
        "taskmanager.memory.network.min": "1024m",
        "taskmanager.memory.network.max": "1024m",
    }
    assert tm.recorded()["taskmanager.memory.process.size"] == "16384m"


def test_flinks_own_defaults_without_the_network_cap():
    # The same budget with Flink's defaults only: network is 10% of the Flink memory,
    # uncapped (Flink derives 1583769214 b network, 6335076856 b managed, 7650410378 b task
    # heap; rounding down to MiB moves the odd bytes into the task heap).
    tm = memory.size_taskmanager({}, slots=2, machine_memory=24 * GIB)
    assert (tm.managed, tm.network, tm.task_heap) == (6041 * MIB, 1510 * MIB, 7297 * MIB)


def test_one_slot_and_small_machines():
    one = memory.size_taskmanager({}, slots=1, machine_memory=24 * GIB)
    assert _sizes(one)["process"] == 8192 and _sizes(one)["overhead"] == 819
    assert (one.managed, one.network) == (2846 * MIB, 711 * MIB)
    small = memory.size_taskmanager({}, slots=2, machine_memory=4 * GIB)
    assert _sizes(small) == {
        "process": 2730,
        "overhead": 273,
        "flink": 2201,
        "managed": 880,
        "network": 220,
        "task_heap": 845,
        "heap": 973,
        "direct": 476,
    }


def test_explicit_values_win():
    defaults = Settings.defaults().flink_options()
    starved = memory.size_taskmanager(
        {**defaults, "taskmanager.memory.managed.size": "128m"}, 2, 24 * GIB
    )
    assert starved.managed == 128 * MIB
    assert starved.task_heap == (15104 - 128 - 1024 - 256) * MIB  # the heap takes the rest
    fixed = memory.size_taskmanager(
        {**defaults, "taskmanager.memory.process.size": "4g", "parallelism.default": "2"},
        2,
        24 * GIB,
    )
    assert fixed.process == 4 * GIB and fixed.overhead == 409 * MIB
    assert fixed.managed == int((4096 - 256 - 409) * 0.4) * MIB
    fractions = memory.size_taskmanager(
        {
            "taskmanager.memory.managed.fraction": "0.5",
            "taskmanager.memory.network.fraction": "0.05",
            "taskmanager.memory.task.heap.size": "2g",
        },
        2,
        24 * GIB,
    )
    assert (fractions.managed, fractions.network) == (7552 * MIB, 755 * MIB)
    assert fractions.task_heap == 2 * GIB  # explicit, leaving part of the budget unused
    # Flink's rule when the total Flink memory is given: overhead from the process size it implies.
    total = memory.size_taskmanager({"taskmanager.memory.flink.size": "4g"}, 2, 24 * GIB)
    assert total.flink == 4 * GIB and total.overhead == 483 * MIB
    assert total.process == (4096 + 256 + 483) * MIB


@pytest.mark.parametrize(
    ("flink", "message"),
    [
        ({"taskmanager.memory.process.size": "300m"}, "leaves no Flink memory"),
        (
            {"taskmanager.memory.process.size": "1g", "taskmanager.memory.managed.size": "4g"},
            "does not fit",
        ),
        ({"taskmanager.memory.task.heap.size": "20g"}, "does not fit"),
        ({"taskmanager.memory.managed.fraction": "1.5"}, "fraction in"),
        ({"taskmanager.memory.network.max": "lots"}, "not a memory size"),
    ],
)
def test_impossible_sizes_are_usage_errors(flink, message):
    with pytest.raises(UsageError, match=message):
        memory.size_taskmanager(flink, 2, 24 * GIB)


def test_memory_options_reach_the_embedded_cluster_only(tmp_path):
    settings = Settings.load(overrides=["flink.taskmanager.memory.managed.size=3g"])
    flink = settings.flink_options()
    tm = memory.size_taskmanager(flink, 2, 24 * GIB)
    cluster = options.cluster_options(flink, 4567, tm)
    assert cluster["taskmanager.memory.managed.size"] == "3072m"
    assert cluster["taskmanager.memory.task.heap.size"] == tm.cluster_options()[memory.TASK_HEAP]
    assert "taskmanager.memory.process.size" not in cluster  # the MiniCluster ignores it
    job = options.job_options(settings, JobSpec("q1", tmp_path, tmp_path))
    assert not [key for key in job if key.startswith("taskmanager.memory.")]
    assert job["state.backend.type"] == "rocksdb"


class _FakeRest:
    def __init__(self, managers: dict[str, dict]):
        self.managers = managers

    def get(self, path: str) -> dict:
        if path == "/taskmanagers":
            return {"taskmanagers": [{"id": key} for key in self.managers]}
        return self.managers[path.rsplit("/", 1)[1]]


def test_taskmanager_facts_come_from_every_taskmanager_in_id_order():
    detail = {
        "slotsNumber": 1,
        "memoryConfiguration": {"managedMemory": 6203375616, "taskHeap": 7962886144},
        "totalResource": {"managedMemory": 5916, "extendedResources": {}},
        "freeResource": {"managedMemory": 0},
        "hardware": {"freeMemory": 8099201024, "physicalMemory": 25276510208},
    }
    facts = memory.taskmanager_facts(_FakeRest({"b": {**detail, "slotsNumber": 2}, "a": detail}))
    assert facts["taskmanagers"] == "2"
    assert facts["taskmanager.0:slotsNumber"] == "1" and facts["taskmanager.1:slotsNumber"] == "2"
    assert facts["taskmanager.0:memoryConfiguration.managedMemory"] == "6203375616"
    assert facts["taskmanager.0:totalResource.managedMemory"] == "5916"
    assert facts["taskmanager.0:hardware.freeMemory"] == "8099201024"
    assert not [key for key in facts if "freeResource" in key or "extendedResources" in key]
