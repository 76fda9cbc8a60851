"""The scored profile's own logic, with a scripted profiler: spans, the dump, and failures
that are recorded instead of failing the query (a real profiler: tests/engines)."""

from __future__ import annotations

from pathlib import Path

from nexmark.engines.profiling import summarise
from nexmark.protocol.query.profiled import ScoredProfile


class ScriptedProfiler:
    def __init__(self, refuse: str | None = None) -> None:
        self.calls: list[str] = []
        self.event, self.interval_ms, self.refuse = None, 10, refuse

    def resume(self) -> str:
        if self.refuse == "resume":
            raise RuntimeError("perf_event_open failed\nmore lines")
        self.calls.append("resume")
        self.event = "itimer"
        return self.event

    def pause(self) -> None:
        self.calls.append("pause")

    def dump(self, flame_graph: Path):
        if self.refuse == "dump":
            raise OSError("No space left on device")
        self.calls.append(f"dump {flame_graph.name}")
        return summarise("a;b;rocksdb::Get 3\na;b;c 1\n")


class EngineWith:
    def __init__(self, profiler) -> None:
        self._profiler = profiler

    def profiler(self):
        return self._profiler


def test_each_repeat_is_one_span_and_the_dump_comes_once(tmp_path: Path) -> None:
    profiler = ScriptedProfiler()
    scored = ScoredProfile(EngineWith(profiler), tmp_path / "q5.html", "profiles/q5.html")
    for _ in range(3):
        scored.resume()
        scored.pause()
    profile = scored.finish()
    assert profiler.calls == ["resume", "pause"] * 3 + ["dump q5.html"]
    assert profile is not None and profile.not_profiled is None
    assert profile.flame_graph == "profiles/q5.html"
    assert (profile.event, profile.interval_ms, profile.samples) == ("itimer", 10, 4)
    assert profile.kinds == {"state backend": 0.75, "other": 0.25}
    assert list(profile.top_frames) == ["rocksdb::Get", "c"]


def test_a_pause_without_a_running_span_asks_nothing(tmp_path: Path) -> None:
    profiler = ScriptedProfiler()
    scored = ScoredProfile(EngineWith(profiler), tmp_path / "q5.html", "profiles/q5.html")
    scored.pause()  # (a repeat that failed before its restore)
    assert profiler.calls == []
    assert scored.finish() is None  # nothing sampled, nothing to say


def test_a_profiler_that_will_not_start_is_recorded_not_raised(tmp_path: Path) -> None:
    profiler = ScriptedProfiler(refuse="resume")
    scored = ScoredProfile(EngineWith(profiler), tmp_path / "q5.html", "profiles/q5.html")
    scored.resume()
    scored.pause()
    scored.resume()  # (not asked again)
    profile = scored.finish()
    assert profile is not None
    assert profile.not_profiled == "the profiler did not start: perf_event_open failed"
    assert profile.flame_graph is None and profile.samples is None


def test_a_profile_that_cannot_be_written_keeps_the_reason(tmp_path: Path) -> None:
    scored = ScoredProfile(
        EngineWith(ScriptedProfiler(refuse="dump")), tmp_path / "q5.html", "profiles/q5.html"
    )
    scored.resume()
    scored.pause()
    profile = scored.finish()
    assert profile is not None and profile.flame_graph is None
    assert profile.not_profiled == "the profile was not written: No space left on device"


def test_a_target_the_engine_cannot_profile_records_its_reason(tmp_path: Path) -> None:
    scored = ScoredProfile(
        EngineWith(None), tmp_path / "q5.html", "profiles/q5.html", not_profiled="a remote cluster"
    )
    scored.resume()
    scored.pause()
    profile = scored.finish()
    assert profile is not None and profile.not_profiled == "a remote cluster"
