"""Every query (q0-q23 and cep0-cep3) through the whole two-phase cycle on the embedded engine,
on a small dataset.

Warm-up with the source kept open, phase checkpoint, cancel, restore on the benchmark part, run
until the source emitted every event, checkpoint, cancel - what the runner does. Each query must
restore from its phase checkpoint and, where `emits_rows_on_small_data` says so, emit rows.
"""

from __future__ import annotations

import pytest
from flink_helpers import count_events, two_phase

from nexmark.engines.base import SinkKind
from nexmark.engines.flink.collect import committed_files
from nexmark.workload import queries

pytestmark = [pytest.mark.flink, pytest.mark.slow]


@pytest.mark.parametrize("query", [q.name for q in queries.REGISTERED])
def test_query_runs_the_two_phase_cycle(flink_engine, small_dataset, tmp_path, query):
    meta = queries.get(query)
    reason = flink_engine.unsupported_reason(query)
    if reason is not None:
        assert query == "q6", f"{query} unexpectedly unsupported: {reason}"
        pytest.skip(f"Flink cannot plan {query}: {reason}")
    cycle = two_phase(flink_engine, query, small_dataset.path, tmp_path, SinkKind.COLLECT)

    assert cycle.restored is not None, "the benchmark job did not restore"
    assert cycle.restored.id == cycle.phase_checkpoint.id
    assert cycle.warmup_events == count_events(small_dataset.part_dir("warmup"))
    assert cycle.benchmark_events == count_events(small_dataset.part_dir("benchmark"))
    if meta.own_sink:
        written = committed_files(tmp_path / "q10-output")
        assert written and sum(f.stat().st_size for f in written) > 0
    elif meta.emits_rows_on_small_data:
        assert cycle.benchmark.collected_rows(), f"{query} emitted no rows"
