"""Whether two sets of results compare fairly: the setup facts that differ between them
(machine, versions, options, dataset; across engines, the engine's own facts aside) and what
else each machine was doing before its run (the system checks)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from nexmark.results.query_result import QueryResult
from nexmark.results.setup import busy, speed_difference, summary_line, workers_line


def query_order(name: str) -> tuple[int, str]:
    """q2 before q10, then names without a number (cep0...) by name."""
    digits = name.lstrip("q")
    return (int(digits), name) if digits.isdigit() else (10**6, name)


def system_context(
    base: Sequence[QueryResult], new: Sequence[QueryResult], base_label: str, new_label: str
) -> list[str]:
    """Each side's system check before its run, whether the two machines ran at another speed,
    and each query before which other processes were busy (more than the bound the run warned
    at)."""
    lines = []
    speeds = [
        next((r.setup.system_check.speed for r in side if r.setup.system_check.speed), None)
        for side in (base, new)
    ]
    differs = speed_difference(*speeds)
    if differs is not None:
        lines.append(differs)
    for label, side in ((base_label, base), (new_label, new)):
        seen = []
        for r in side:
            check = r.setup.system_check
            if check != type(check)() and check not in seen:  # recorded, and not yet shown
                seen.append(check)
                lines.append(f"system check before {label}: {summary_line(check)}")
    for label, side in ((base_label, base), (new_label, new)):
        for r in sorted(side, key=lambda r: query_order(r.query)):
            if busy(r.system_check):
                c = r.system_check
                lines.append(
                    f"{label} {r.query}: other processes used {c.other_cores:.2f} cores in the "
                    f"{c.window_s or 0:.1f} s before it"
                )
    return lines


_SETUP_FIELDS = (
    "engine",
    "engine_version",
    "dataset_id",
    "events_id",
    "events_benchmark",
    "events_warmup",
)
# Run options that select or bound queries but do not change a query's numbers.
_NEUTRAL_OPTIONS = {"setup.options.queries", "setup.options.suite", "setup.options.timeout_s"}


def _flat(result: QueryResult) -> dict[str, Any]:
    """The setup-like facts of a result, flattened: what must match for a fair comparison."""
    flat = {name: getattr(result, name) for name in _SETUP_FIELDS}
    setup = dataclasses.asdict(result.setup)
    flat["setup.engine_target"] = setup["engine_target"]
    for group in ("machine", "versions", "options", "engine_config"):
        for key, value in setup[group].items():
            flat[f"setup.{group}.{key}"] = value
    if result.setup.workers:  # a cluster: another set of workers is another setup
        flat["setup.workers"] = workers_line(result.setup.workers)
    return flat


# Facts that differ between two engines by nature: the engine is what is compared.
_ENGINE_FACTS = (
    "engine",
    "engine_version",
    "setup.engine_target",
    "setup.engine_config.",
    "setup.workers",  # TaskManagers against executors: named by each engine its own way
)


def setup_differences(
    base: Sequence[QueryResult], new: Sequence[QueryResult], across_engines: bool = False
) -> list[str]:
    """Lines like 'setup.machine.cores: 2 -> 8' for every setup fact that differs (across
    engines: besides the engine itself, its version, target and configuration)."""
    if not base or not new:
        return []
    diffs: dict[str, str] = {}
    new_by_query = {r.query: r for r in new}
    pairs = [(r, new_by_query[r.query]) for r in base if r.query in new_by_query]
    for a, b in pairs or [(base[0], new[0])]:
        fa, fb = _flat(a), _flat(b)
        if fa["events_id"] is not None and fa["events_id"] == fb["events_id"]:
            fa.pop("dataset_id"), fb.pop("dataset_id")  # the same events, laid out otherwise
        for key in sorted((set(fa) | set(fb)) - _NEUTRAL_OPTIONS):
            if across_engines and key.startswith(_ENGINE_FACTS):
                continue
            va, vb = fa.get(key), fb.get(key)
            if va != vb and key not in diffs:
                diffs[key] = f"{key}: {_show(va)} -> {_show(vb)}"
    return list(diffs.values())


def _show(value: Any) -> str:
    return "(unset)" if value is None else str(value)
