"""The query registry: names, selection parsing, SQL files (shared, an engine's own where its
dialect differs), what Spark needs to know beside the SQL, placeholders and q13's side table."""

from __future__ import annotations

import hashlib

import pytest

from nexmark.engines.base import Engine
from nexmark.engines.flink import FlinkEngine
from nexmark.engines.spark import SparkEngine, writes
from nexmark.errors import EngineError, UnsupportedQueryError, UsageError
from nexmark.workload import queries, side_table

FLINK_SQL, SPARK_SQL = FlinkEngine.sql_dir(), SparkEngine.sql_dir()


def test_all_lists_q0_to_q23_in_order():
    assert [q.name for q in queries.ALL] == [f"q{i}" for i in range(24)]
    assert [q.number for q in queries.ALL] == list(range(24))


def test_every_query_is_described_and_has_distinct_columns():
    for q in queries.ALL:
        assert q.title and q.description and q.state, q.name
        assert q.columns and len(set(q.columns)) == len(q.columns), q.name


def test_flags_follow_the_spec():
    assert {q.name for q in queries.ALL if not q.deterministic} == {"q12", "q13"}
    assert {q.name for q in queries.ALL if q.own_sink} == {"q10"}
    assert queries.get("q13").state == "lookup"
    assert queries.get("q0").state == "none"
    # Window output waits for the watermark (or the wall clock for q12).
    quiet = {q.name for q in queries.ALL if not q.emits_rows_on_small_data}
    assert {"q5", "q7", "q8", "q11", "q12"} <= quiet
    assert "q0" not in quiet


def test_get_is_case_and_space_tolerant():
    assert queries.get(" Q7 ").name == "q7"


def test_get_unknown_names_the_known_range():
    with pytest.raises(UsageError, match=r"unknown query 'q99'; known: q0\.\.q23, cep0\.\.cep3"):
        queries.get("q99")


def test_the_cep_suite_is_named_beside_the_main_one():
    assert [q.name for q in queries.CEP] == ["cep0", "cep1", "cep2", "cep3"]
    assert [q.number for q in queries.CEP] == [0, 1, 2, 3]
    assert queries.get(" CEP2 ").name == "cep2"
    # 'all' stays the main suite; 'cep' selects the four; names mix in any order.
    assert queries.select("cep") == list(queries.CEP)
    assert not set(queries.select("all")) & set(queries.CEP)
    assert [q.name for q in queries.select("cep3,q5,cep0")] == ["cep3", "q5", "cep0"]
    for q in queries.CEP:
        assert q.state.startswith("pattern") and not q.emits_rows_on_small_data
        assert "MATCH_RECOGNIZE" in queries.sql_text(q, FLINK_SQL)
        assert "MATCH_RECOGNIZE" in queries.sql_text(q, SPARK_SQL)  # Spark's refusal is its own


def test_select_all_and_lists():
    assert queries.select("all") == list(queries.ALL)
    assert queries.select("ALL") == list(queries.ALL)
    assert [q.name for q in queries.select("q5, q0,q20")] == ["q5", "q0", "q20"]
    assert [q.name for q in queries.select("q3,q3,Q3")] == ["q3"]


@pytest.mark.parametrize("spec", ["", " ", ",", "q1,,q2", "q1,"])
def test_select_rejects_empty_parts(spec):
    with pytest.raises(UsageError):
        queries.select(spec)


def test_select_rejects_unknown():
    with pytest.raises(UsageError, match="unknown query 'q24'"):
        queries.select("q1,q24")


def test_every_query_has_flink_sql_ending_in_its_final_statement():
    for q in queries.REGISTERED:
        statements = queries.sql(q, FLINK_SQL, side_table_dir="/s", output_dir="/o")
        final = statements[-1].upper()
        head = "INSERT" if q.own_sink else "SELECT"
        assert final.startswith(head), q.name
        assert "SELECT *" not in " ".join(statements).upper(), q.name
        assert all(not s.lstrip().startswith("--") for s in statements), q.name


def test_sql_splits_setup_statements():
    statements = queries.sql("q4", FLINK_SQL)
    assert len(statements) == 2
    assert statements[0].upper().startswith("CREATE TEMPORARY VIEW")


def test_sql_fills_placeholders_and_requires_them():
    statements = queries.sql("q13", FLINK_SQL, side_table_dir="/tmp/side-x")
    assert "'path' = '/tmp/side-x'" in statements[0]
    assert "${" not in " ".join(statements)
    with pytest.raises(ValueError, match="side_table_dir"):
        queries.sql("q13", FLINK_SQL)


def test_sql_missing_from_the_engine_dir_and_the_shared_one(tmp_path):
    # q2 is written in each engine's dialect: a folder without it has none to fall back on.
    with pytest.raises(UsageError, match=r"no SQL for q2 in .* or .*workload.sql"):
        queries.sql("q2", tmp_path)


def test_an_engine_file_comes_before_the_shared_one(tmp_path):
    shared = queries.SHARED_SQL_DIR / "q0.sql"
    assert queries.sql_file("q0", tmp_path) == shared
    assert queries.sql("q0", tmp_path) == queries.sql("q0", FLINK_SQL)
    (tmp_path / "q0.sql").write_text("-- an engine's own q0\nSELECT auction FROM bid\n")
    assert queries.sql_file("q0", tmp_path) == tmp_path / "q0.sql"
    assert queries.sql("q0", tmp_path) == ["SELECT auction FROM bid"]


def _statements_only(path) -> str:
    """A SQL file without its comments and with its whitespace collapsed."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return " ".join(" ".join(line for line in lines if not line.lstrip().startswith("--")).split())


def _own_files(cls) -> dict[str, object]:
    return {p.name: p for p in cls.sql_dir().iterdir() if p.name.endswith(".sql")}


def test_each_query_is_written_once_where_the_engines_agree():
    assert FlinkEngine.sql_dir() != SparkEngine.sql_dir()
    shared = {p.name: p for p in queries.SHARED_SQL_DIR.iterdir() if p.name.endswith(".sql")}
    flink, spark = _own_files(FlinkEngine), _own_files(SparkEngine)
    named = {f"{q.name}.sql" for q in queries.REGISTERED}
    assert set(shared) | set(flink) | set(spark) <= named  # no file for an unknown query
    for own in (flink, spark):
        # An engine's own file is its dialect: never the shared statement again.
        for name in set(own) & set(shared):
            assert _statements_only(own[name]) != _statements_only(shared[name]), name
    # The same statement in both engines' folders belongs in the shared one.
    for name in set(flink) & set(spark):
        assert _statements_only(flink[name]) != _statements_only(spark[name]), name
    assert len(shared) >= 16 and {"q0.sql", "q9.sql", "cep0.sql"} <= set(shared)


def test_every_query_resolves_on_every_engine():
    for cls in (FlinkEngine, SparkEngine):
        for q in queries.REGISTERED:
            path = queries.sql_file(q, cls.sql_dir())
            assert path.name == f"{q.name}.sql", (cls.name, q.name)
            assert queries.sql(q, cls.sql_dir(), side_table_dir="/s", output_dir="/o")
    # q2 is each engine's own (MOD on Flink, % on Spark); q0 is the shared file on both.
    assert "MOD(auction, 123)" in queries.sql_text("q2", FLINK_SQL)
    assert "auction % 123" in queries.sql_text("q2", SPARK_SQL)
    assert queries.sql_file("q0", FLINK_SQL) == queries.sql_file("q0", SPARK_SQL)
    with pytest.raises(UsageError, match="has no SQL files"):
        Engine.sql_dir()


def test_no_sql_file_carries_engine_fields_in_comments():
    folders = (queries.SHARED_SQL_DIR, FLINK_SQL, SPARK_SQL)
    for path in (p for folder in folders for p in folder.iterdir() if p.name.endswith(".sql")):
        text = path.read_text(encoding="utf-8")
        assert "-- spark:" not in text and "-- flink:" not in text, path.name


def test_spark_knows_how_to_write_every_query():
    table = writes.table()
    assert set(table) == {q.name for q in queries.REGISTERED}
    assert table["q0"] == writes.QueryWrite("append", (), "none")
    assert table["q17"] == writes.QueryWrite("update", ("auction", "day"), "grows")
    assert table["q10"] == writes.QueryWrite("append", (), "none", True, ("dt", "hm"))
    assert table["q5"].state_bound.startswith("the watermark")
    assert writes.of(" Q12 ").keys == ("bidder", "window_start")
    assert SparkEngine().capabilities().queries == {q.name for q in queries.REGISTERED}


def test_spark_query_takes_its_write_mode_from_the_data(tmp_path):
    from nexmark.engines.spark.statements import spark_query

    q17 = spark_query("q17", tmp_path)
    assert (q17.mode, q17.keys, q17.output_dir) == ("update", ("auction", "day"), None)
    q10 = spark_query("q10", tmp_path)
    assert q10.output_dir == tmp_path / "q10-output" and q10.partition == ("dt", "hm")
    assert q10.statements[-1].upper().startswith("SELECT")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("q0 = [", "not valid TOML"),
        ('q99 = { mode = "append", state = "none" }', "'q99' is no registered query"),
        ('q0 = "append"', "q0 must be a table"),
        ('q0 = { mode = "append", state = "none", ttl = 1 }', "unknown field"),
        ('q0 = { mode = "complete", state = "none" }', "mode must be one of"),
        ('q0 = { mode = "append", state = "bounded" }', "state must be one of"),
        ('q4 = { mode = "update", state = "grows" }', "update mode needs key columns"),
        ('q4 = { mode = "append", key = ["category"], state = "grows" }', "only update mode"),
        ('q4 = { mode = "update", key = ["seller"], state = "grows" }', "seller not among q4's"),
        ('q4 = { mode = "update", key = "category", state = "grows" }', "must be a list"),
        ('q0 = { mode = "append", sink = "files", state = "none" }', "own sink"),
        ('q10 = { mode = "append", state = "none" }', "own sink"),
        ('q0 = { mode = "append", partition = ["auction"], state = "none" }', "need sink"),
    ],
)
def test_a_bad_spark_write_entry_is_one_line(text, message):
    with pytest.raises(EngineError, match=message) as raised:
        writes.parse(text, "queries.toml")
    assert "\n" not in str(raised.value) and str(raised.value).startswith("queries.toml")


def test_a_query_spark_has_no_entry_for_is_unsupported(monkeypatch):
    monkeypatch.setattr(writes, "table", lambda: {})
    with pytest.raises(UnsupportedQueryError, match="no Spark write mode for q0"):
        writes.of("q0")


def test_prepare_query_dirs(tmp_path):
    assert queries.prepare_query_dirs("q0", tmp_path) == {}
    out = queries.prepare_query_dirs("q10", tmp_path)
    assert set(out) == {"output_dir"}
    assert (tmp_path / "q10-output").is_dir()
    side = queries.prepare_query_dirs(queries.get("q13"), tmp_path)
    files = list((tmp_path / "q13-side-table").iterdir())
    assert side == {"side_table_dir": str((tmp_path / "q13-side-table").resolve())}
    assert [f.name for f in files] == [side_table.FILE_NAME]  # no temporary file left behind


def test_side_table_has_10000_unique_keys_and_values(tmp_path):
    path = side_table.write_side_table(tmp_path)
    lines = path.read_text().splitlines()
    assert len(lines) == 10_000
    keys = [int(line.split(",")[0]) for line in lines]
    assert keys == list(range(10_000))
    values = {line.split(",")[1] for line in lines}
    assert len(values) == 10_000
    assert all(line.endswith(f",{side_table.VALID_FROM}") for line in lines)


def test_side_table_is_deterministic(tmp_path):
    first = side_table.write_side_table(tmp_path / "a").read_bytes()
    second = side_table.write_side_table(tmp_path / "b").read_bytes()
    assert first == second
    # Pinned: a change of the side table changes q13's results and must be deliberate.
    assert side_table.side_value(1179) == "side-1179-6452aa838d4d"
    assert hashlib.sha256(first).hexdigest()[:16] == _PINNED_SIDE_TABLE_DIGEST


_PINNED_SIDE_TABLE_DIGEST = "2178bbeaafd28a7d"


def test_cli_lists_every_query_with_its_state(nexmark_main):
    done = nexmark_main("queries")
    code, out = done.returncode, done.stdout
    assert code == 0
    for q in queries.ALL:
        assert f" {q.name} " in out
    assert "lookup" in out and "windowed, bounded" in out


def test_cli_prints_sql_of_a_selection(nexmark_main):
    done = nexmark_main("queries", "q2", "--sql")
    code, out = done.returncode, done.stdout
    assert code == 0
    assert "MOD(auction, 123) = 0" in out
    assert "q3" not in out


def test_cli_unknown_query_is_a_usage_error(nexmark_main):
    done = nexmark_main("queries", "q0,q99")
    code, err = done.returncode, done.stderr
    assert code == 2
    assert "unknown query 'q99'" in err


def test_the_cep_suite():
    from nexmark.protocol.suite.suites import get_suite

    suite = get_suite("cep")
    assert [q.name for q in queries.select(suite.queries)] == ["cep0", "cep1", "cep2", "cep3"]
    assert suite.events == 20_000_000 and suite.state_ttl is None


def test_the_quick_suite_sizes_each_query_for_a_phase_to_score_on_whole_windows():
    from nexmark.protocol.suite.suites import get_suite
    from nexmark.results import steady

    suite = get_suite("quick")
    names = tuple(q.name for q in queries.select(suite.queries))
    sittings = suite.sittings(names)
    assert sittings == [(64_000_000, ("q0", "q8")), (12_000_000, ("q5", "q11"))]
    for events, group in sittings:
        span_s = events / 4 / 100_000  # the benchmark part at the default 100K events/s
        for name in group:
            cycle = queries.get(name).window_cycle_s
            assert cycle is None or steady.cycle_offset(span_s, cycle) == 0, name
    # A suite without sizes per query is one sitting.
    assert get_suite("cep").sittings(("cep0", "cep1")) == [(20_000_000, ("cep0", "cep1"))]
