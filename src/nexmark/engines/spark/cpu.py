"""CPU seconds of a Spark application: the JVM tree here (`engines.support`), and on a cluster
its executors' tasks.

In local mode the driver JVM runs every task, so its process tree (with any `pyspark.daemon`
child) is the whole cost. On a cluster the tasks run in executor JVMs on other machines; Spark's
own status store (the one its UI reads, kept even with the UI off) records each stage's
executor CPU time (`executorCpuTime` + `executorDeserializeCpuTime`, summed over its tasks).
That is task CPU: an executor's idle and JVM-internal threads are not in it.
"""

from __future__ import annotations

from typing import Any

NS = 1e9


class ExecutorTaskCpu:
    """Running total of task CPU seconds on the executors, read from the status store.

    Finished stages are remembered (the store drops old ones past `spark.ui.retainedStages`), so
    the total never goes back; each call reads only stages new since the last one: the store
    lists stages newest first, and a stage id is given at submission, so once the listing
    reaches a known finished stage below every stage that was still open last time, the rest
    is known.
    """

    def __init__(self, spark_context: Any) -> None:
        self._sc = spark_context
        self._finished: dict[tuple[int, int], float] = {}
        self._lowest_open = float("inf")

    def _stages(self, *statuses: str) -> Any:
        jvm = self._sc._jvm
        names = jvm.java.util.ArrayList()
        for status in statuses:
            names.add(jvm.org.apache.spark.status.api.v1.StageStatus.valueOf(status))
        store = self._sc._jsc.sc().statusStore()
        no_quantiles = self._sc._gateway.new_array(jvm.double, 0)
        return store.stageList(names, False, False, no_quantiles, jvm.java.util.ArrayList())

    @staticmethod
    def _cpu(stage: Any) -> float:
        return (stage.executorCpuTime() + stage.executorDeserializeCpuTime()) / NS

    def seconds(self) -> float:
        done = self._stages("COMPLETE", "FAILED")
        for i in range(done.length()):
            stage = done.apply(i)
            key = (stage.stageId(), stage.attemptId())
            if key in self._finished:
                if key[0] < self._lowest_open:
                    break
                continue
            self._finished[key] = self._cpu(stage)
        open_stages = self._stages("ACTIVE", "PENDING")
        running, lowest = 0.0, float("inf")
        for i in range(open_stages.length()):
            stage = open_stages.apply(i)
            running += self._cpu(stage)
            lowest = min(lowest, stage.stageId())
        self._lowest_open = lowest
        return sum(self._finished.values()) + running
