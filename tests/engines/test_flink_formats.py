"""Flink reads Parquet with its own format: the pinned jars, their fetching, the class paths,
and the rows a real job reads from pyarrow-written files, compared with the generator's."""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from pathlib import Path

import pytest

from nexmark import maven
from nexmark.engines.flink import FlinkEngine, ddl, files, jars
from nexmark.engines.flink.local_cluster import LocalCluster
from nexmark.engines.spec import SOURCE_ONLY, JobSpec
from nexmark.errors import DatasetError, EngineError, JarsUnavailableError
from nexmark.java import find_java
from nexmark.workload import generator as gen
from nexmark.workload.dataset import part_format
from nexmark.workload.schema import COLUMNS, file_name

# -- the pinned jars (no JVM) -------------------------------------------------------------------


def test_pinned_groups_and_their_pom():
    groups = jars.groups()
    assert set(jars.DEFAULT_GROUPS) <= set(groups) and "avro" in groups
    parquet = [str(j) for j in groups["parquet"]]
    assert "org.apache.flink:flink-sql-parquet:2.3.0" in parquet
    # flink-sql-parquet bundles its own parquet-hadoop: a second copy must never be added.
    assert not [j for js in groups.values() for j in js if j.artifact_id.startswith("parquet-")]
    pom = jars.pom(jars.group_jars(["parquet", "avro"]))
    for jar in jars.group_jars(["parquet", "avro"]):
        assert f"<artifactId>{jar.artifact_id}</artifactId><version>{jar.version}</version>" in pom
    assert pom.count("<exclusion><groupId>*</groupId>") == len(parquet) + 1  # nothing transitive
    # A changed pin is a new cache folder.
    assert jars.group_dir("parquet").name.startswith("parquet-")
    assert jars.group_dir("parquet") != jars.group_dir("avro")


def test_jars_dir_missing_jars_is_one_line(monkeypatch, tmp_path):
    monkeypatch.setenv(jars.ENV_DIR, str(tmp_path))
    with pytest.raises(JarsUnavailableError) as caught:
        jars.ensure(["parquet"])
    message = str(caught.value)
    assert "\n" not in message and "flink-sql-parquet-2.3.0.jar" in message
    assert jars.ENV_DIR in message and str(tmp_path) in message


def test_jars_dir_with_the_jars_is_used_as_is(monkeypatch, tmp_path):
    cached = jars.ensure(["parquet"])  # fetched by tests/setup_system.py
    for jar in cached:
        (tmp_path / jar.name).symlink_to(jar)
    monkeypatch.setenv(jars.ENV_DIR, str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))  # no mvn: nothing may be fetched
    assert jars.ensure(["parquet"]) == [tmp_path / jar.name for jar in cached]


def test_no_maven_and_no_jars_is_one_line_and_starts_no_jvm(monkeypatch, tmp_path):
    """Neither `mvn` nor Maven Central (a port nothing listens on) can give the jars."""
    monkeypatch.delenv(jars.ENV_DIR, raising=False)
    monkeypatch.setattr(maven, "cache_root", lambda: tmp_path / "cache")
    monkeypatch.setattr(maven, "CENTRAL", "http://127.0.0.1:9/maven2")
    java = find_java()
    monkeypatch.setenv("JAVA_HOME", str(java.home))
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))  # neither mvn nor anything else
    with pytest.raises(JarsUnavailableError) as caught:
        jars.ensure(["parquet"])
    message = str(caught.value)
    assert "\n" not in message and "mvn" in message and jars.ENV_DIR in message
    assert "hadoop-common-3.4.1.jar" in message
    engine = FlinkEngine()
    with pytest.raises(EngineError, match="mvn") as caught:
        engine.start()
    assert "\n" not in str(caught.value) and engine.gateway is None


@pytest.mark.slow
def test_maven_fetches_the_pinned_jar_with_its_checksum(monkeypatch, tmp_path):
    monkeypatch.delenv(jars.ENV_DIR, raising=False)
    monkeypatch.setattr(maven, "cache_root", lambda: tmp_path / "cache")
    (jar,) = jars.ensure(["zstd"])
    assert jar.parent == jars.group_dir("zstd") and jar.name == "zstd-jni-1.5.6-6.jar"
    published = Path.home() / ".m2/repository/com/github/luben/zstd-jni/1.5.6-6"
    sha1 = published / "zstd-jni-1.5.6-6.jar.sha1"
    if sha1.is_file():  # the checksum Maven Central publishes, which mvn -C checked
        assert hashlib.sha1(jar.read_bytes()).hexdigest() == sha1.read_text().split()[0]
    monkeypatch.setenv("PATH", str(tmp_path))  # cached now: no mvn needed
    assert jars.ensure(["zstd"]) == [jar]
    assert [p.name for p in (tmp_path / "cache").iterdir()] == [jar.parent.name]  # no temp left


@pytest.mark.slow
def test_maven_failure_is_one_line(monkeypatch, tmp_path):
    monkeypatch.delenv(jars.ENV_DIR, raising=False)
    monkeypatch.setattr(maven, "cache_root", lambda: tmp_path / "cache")
    pinned = tmp_path / "jars.toml"
    pinned.write_text(
        '[groups.parquet]\njars = ["org.apache.flink:flink-sql-parquet:0.0.0-no-such-version"]\n'
        + '[maven]\ndependency_plugin = "'
        + jars._FLINK._pinned()["maven"]["dependency_plugin"]
        + '"\n'
    )
    with pytest.raises(JarsUnavailableError) as caught:
        maven.PinnedJars(pinned, "Flink's").ensure(["parquet"])
    message = str(caught.value)
    assert "\n" not in message and "mvn could not fetch" in message
    assert "flink-sql-parquet-0.0.0-no-such-version.jar" in message
    assert not list((tmp_path / "cache").iterdir())  # nothing half-written left


def test_local_cluster_links_the_jars_into_its_lib(tmp_path):
    extra = jars.ensure(jars.DEFAULT_GROUPS)
    cluster = LocalCluster(tmp_path / "cluster", find_java(), {}, extra)
    cluster._prepare_home()
    lib = tmp_path / "cluster" / "home" / "lib"
    for jar in extra:
        assert (lib / jar.name).resolve() == jar.resolve()
    assert (lib / "flink-dist-2.3.0.jar").exists()  # the distribution's own are still there


# -- the table ----------------------------------------------------------------------------------


def test_source_ddl_per_format(tmp_path):
    csv = ddl.source_ddl(tmp_path, keep_open=False)
    parquet = ddl.source_ddl(tmp_path, keep_open=False, format="parquet")
    assert "'format' = 'csv'" in csv and "'csv.null-literal' = ''" in csv
    assert "'format' = 'parquet'" in parquet and "csv." not in parquet
    # The same physical and computed columns and watermark: only the WITH clause differs.
    assert csv.split(") WITH (")[0] == parquet.split(") WITH (")[0]
    assert "`date_time_ms` BIGINT" in parquet and "WATERMARK FOR `date_time`" in parquet
    with pytest.raises(ValueError, match="unknown file format"):
        ddl.source_ddl(tmp_path, keep_open=False, format="orc")


def test_part_format_by_extension_among_what_flink_reads(tmp_path):
    files.write_probe_file(tmp_path, "avro")  # no dataset format, but Flink reads it
    assert part_format(tmp_path, ddl.FORMATS) == "avro"
    (tmp_path / "part-00000-001.csv").write_text("")
    with pytest.raises(DatasetError, match="two formats"):
        part_format(tmp_path, ddl.FORMATS)


# -- real Flink ---------------------------------------------------------------------------------

# Three files of 256: one uncompressed, one snappy, one zstd. Few: the rows come back through
# py4j one by one (3,000 once took 2 to 5 minutes of a CI worker).
EVENTS = 768
CODECS = ("none", "snappy", "zstd")


@pytest.fixture(scope="module")
def parquet_part(tmp_path_factory) -> Path:
    part = tmp_path_factory.mktemp("parquet") / "benchmark"
    part.mkdir()
    per_file = EVENTS // len(CODECS)
    for i, codec in enumerate(CODECS):
        table = files.file_table(i * per_file, (i + 1) * per_file)
        # Row groups of 128 rows: two per file, so one file is more than one row group.
        files.write_parquet(table, part / f"part-00000-{i:03d}.parquet", codec, 128)
    return part


def _expected_rows() -> Counter:
    """The generator's events as the query selects them: the files' columns (times as epoch
    milliseconds), then the computed TIMESTAMP(3) columns (naive UTC datetimes)."""
    events = gen.generate_events(gen.GeneratorConfig(), 0, EVENTS)
    stored = gen.to_file_columns(events).drop(["event_number"]).to_pylist()
    times = events.select(["date_time", "a_expires"]).to_pylist()
    return Counter(
        tuple([*(row[file_name(c)] for c in COLUMNS), t["date_time"], t["a_expires"]])
        for row, t in zip(stored, times, strict=True)
    )


@pytest.mark.flink
@pytest.mark.slow
def test_flink_reads_every_event_of_pyarrow_parquet_files(flink_engine, parquet_part):
    """Flink's parquet format reads INT32, INT64 and nullable UTF8 columns (REQUIRED and
    OPTIONAL) of files pyarrow wrote, uncompressed, snappy and zstd: every event equals the
    generator's, the computed times included."""
    from nexmark.engines.flink.gateway import table_environment

    t_env = table_environment({"table.local-time-zone": ddl.TIME_ZONE, "parallelism.default": "1"})
    t_env.execute_sql(ddl.source_ddl(parquet_part, keep_open=False, format="parquet"))
    names = [f"`{file_name(c)}`" for c in COLUMNS] + ["`date_time`", "`a_expires`"]
    with t_env.execute_sql(f"SELECT {', '.join(names)} FROM events").collect() as results:
        rows = Counter(tuple(row) for row in results)
    expected = _expected_rows()
    assert sum(rows.values()) == EVENTS
    assert rows == expected


@pytest.mark.flink
@pytest.mark.slow
def test_each_reader_reads_one_whole_parquet_file(flink_engine, tmp_path):
    """A splittable format: Flink's file source splits a file by its file system's blocks, and a
    local file is one block, so each reader gets one whole file of many row groups."""
    part = tmp_path / "benchmark"
    part.mkdir()
    sizes = (1200, 800)  # unequal, so the per-reader counts say which file each one read
    start = 0
    for i, n in enumerate(sizes):
        files.write_parquet(
            files.file_table(start, start + n), part / f"part-00000-{i:03d}.parquet", "snappy", 100
        )
        start += n
    spec = JobSpec(SOURCE_ONLY, part, tmp_path / "work", source_only=True, keep_source_open=True)
    job = flink_engine.submit(spec)
    try:
        deadline = time.monotonic() + 120
        while job.events_emitted() < sum(sizes):
            assert not job.status().state.terminal, job.status().failure
            assert time.monotonic() < deadline, f"read {job.events_emitted()} events"
            time.sleep(0.3)
        # Each subtask's metric is refreshed on its own (every 200 ms, later on a loaded
        # machine): the per-reader counts catch up with the total when both have refreshed.
        while sum(per_reader := job.events_per_reader() or []) < sum(sizes):
            assert time.monotonic() < deadline, f"per reader {per_reader}"
            time.sleep(0.2)
        assert sorted(per_reader) == sorted(sizes)
    finally:
        job.cancel()


def test_a_part_is_checked_for_one_file_per_reader_in_its_format(tmp_path):
    with pytest.raises(DatasetError, match="has no data files"):
        FlinkEngine._check_dataset(tmp_path, 2)
    for n in range(2):
        (tmp_path / f"part-00000-00{n}.csv").write_text("")
    assert FlinkEngine._check_dataset(tmp_path, 2) == "csv"
    with pytest.raises(DatasetError, match="has 2 files but the job runs 3 source readers"):
        FlinkEngine._check_dataset(tmp_path, 3)


@pytest.mark.slow
def test_maven_transitive_group_takes_what_its_roots_depend_on(monkeypatch, tmp_path):
    """A server's group (`transitive = true`) is its pinned roots and their dependencies; the
    resolved list is kept in the cache folder, so a second call needs no mvn."""
    monkeypatch.setattr(maven, "cache_root", lambda: tmp_path / "cache")
    pinned = tmp_path / "jars.toml"
    plugin = jars._FLINK._pinned()["maven"]["dependency_plugin"]
    pinned.write_text(
        '[groups.logging]\njars = ["org.slf4j:slf4j-simple:2.0.17"]\ntransitive = true\n'
        f'[maven]\ndependency_plugin = "{plugin}"\n'
    )
    group = maven.PinnedJars(pinned, "Test's")
    got = group.ensure(["logging"])
    assert got[0].name == "slf4j-simple-2.0.17.jar"  # the root first
    assert any(p.name.startswith("slf4j-api-") for p in got[1:]), got
    assert "<exclusion>" not in maven.pom(group.group_jars(["logging"]), transitive=True)
    monkeypatch.setenv("PATH", str(tmp_path))  # cached now: no mvn needed
    assert group.ensure(["logging"]) == got
