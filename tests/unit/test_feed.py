"""The feed: a part's files appear in the folder a job watches only when released."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nexmark.workload.feed import Feed, PartFeed


def _part(root: Path, lines: list[int]) -> Path:
    part = root / "benchmark"
    part.mkdir(parents=True)
    for i, n in enumerate(lines):
        (part / f"part-00000-00{i}.csv").write_text("".join(f"{i},{j}\n" for j in range(n)))
    return part


@pytest.mark.parametrize("links", ["hard", "symbolic"])
def test_a_feed_is_empty_until_released_then_holds_every_file(tmp_path, monkeypatch, links):
    part = _part(tmp_path / "data", [3, 5])
    if links == "symbolic":  # another file system: os.link fails with EXDEV
        monkeypatch.setattr(os, "link", lambda *a: (_ for _ in ()).throw(OSError(18, "EXDEV")))
    into = tmp_path / "work" / "source" / "benchmark"
    into.mkdir(parents=True)
    (into / "stale.csv").write_text("x\n")
    feed = Feed(PartFeed.of(part), into)
    assert list(feed.dir.iterdir()) == [] and not feed.released  # an earlier job's files: gone
    # Counted under the names the job reads them by, before any of them is there.
    assert feed.file_events == {feed.dir / "part-00000-000.csv": 3,
                                feed.dir / "part-00000-001.csv": 5}  # fmt: skip
    assert feed.release() == feed.paths
    assert feed.release() == [] and feed.released  # once
    linked = sorted(feed.dir.iterdir())
    assert [p.name for p in linked] == ["part-00000-000.csv", "part-00000-001.csv"]
    assert all(p.is_symlink() == (links == "symbolic") for p in linked)
    assert [p.read_text() for p in linked] == [(part / p.name).read_text() for p in linked]
    assert sorted(p.name for p in part.iterdir()) == [p.name for p in linked]  # part untouched


def test_files_released_one_by_one_and_two_parts_in_one_folder(tmp_path):
    """A subset at a time (a feed on a clock), and a second part beside the first's files."""
    warmup = _part(tmp_path / "w", [2, 2])
    bench = _part(tmp_path / "b", [4, 1])
    into = tmp_path / "watch"
    first = Feed(PartFeed.of(warmup), into, prefix="warmup-")
    first.release()
    second = Feed(PartFeed.of(bench), into, prefix="benchmark-", fresh=False)
    assert sorted(p.name for p in into.iterdir()) == ["warmup-part-00000-000.csv",
                                                      "warmup-part-00000-001.csv"]  # fmt: skip
    [one, two] = second.part.files
    assert second.release([one]) == [into / "benchmark-part-00000-000.csv"]
    assert not second.released and not (into / "benchmark-part-00000-001.csv").exists()
    assert second.release([one, two]) == [into / "benchmark-part-00000-001.csv"]
    assert second.released and not list(into.glob(".*"))  # no hidden half-made link left
    again = Feed(PartFeed.of(bench), into, prefix="benchmark-", fresh=False)
    assert again.released  # a retried submission finds them there
