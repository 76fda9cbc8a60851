"""Five reads of a q5-shaped Flink job's vertex counters, shared by the operator tests."""

from __future__ import annotations

import copy

from nexmark.engines.status import VertexLoad

SOURCE = "Source: events[1] -> Calc[2] -> LocalWindowAggregate[3]"
WINDOW = "GlobalWindowAggregate[5] -> Calc[6]"
SINK = "Sink: blackhole[7]"


def vertex_read(
    vertex: str, name: str, ran, busy, bp, idle, rin, rout, parallelism=2
) -> VertexLoad:
    return VertexLoad(vertex, name, parallelism, ran, busy, bp, idle, rin, rout)


# Five reads of a q5-shaped job at parallelism 2, as Flink's counters give them (ms; records):
# the second dump is served twice; the window vertex's busy time reads high at the second read
# (an idle stretch under way, booked later) and is taken back at the fourth; the sink runs
# with busy time measurement off (NaN: no run time, no figure).
READS = [
    [
        vertex_read("v1", SOURCE, 100, 80, 10, 10, 1_000, 1_000),
        vertex_read("v2", WINDOW, 100, 50, 0, 50, 0, 0),
        vertex_read("v3", SINK, None, None, None, 40, 0, None, parallelism=1),
    ],
    [
        vertex_read("v1", SOURCE, 1_100, 880, 110, 110, 101_000, 101_000),
        vertex_read("v2", WINDOW, 1_100, 1_050, 0, 50, 100_000, 10),
        vertex_read("v3", SINK, None, None, None, 900, 10, None, parallelism=1),
    ],
]
READS.append(copy.deepcopy(READS[1]))  # the same dump again
READS += [
    [
        vertex_read("v1", SOURCE, 1_600, 1_280, 160, 160, 151_000, 151_000),
        vertex_read("v2", WINDOW, 1_600, 900, 0, 700, 150_000, 15),
        vertex_read("v3", SINK, None, None, None, 1_400, 15, None, parallelism=1),
    ],
    [
        vertex_read("v1", SOURCE, 2_100, 1_680, 210, 210, 201_000, 201_000),
        vertex_read("v2", WINDOW, 2_100, 1_400, 0, 700, 200_000, 20),
        vertex_read("v3", SINK, None, None, None, 1_900, 20, None, parallelism=1),
    ],
]
