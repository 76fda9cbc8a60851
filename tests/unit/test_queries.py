"""The query registry: names, selection parsing, SQL files, placeholders and q13's side table."""

from __future__ import annotations

import hashlib

import pytest

from nexmark.engines.base import Engine
from nexmark.engines.flink import FlinkEngine
from nexmark.engines.spark import SparkEngine
from nexmark.errors import UsageError
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


def test_sql_missing_from_the_engine_dir(tmp_path):
    with pytest.raises(UsageError, match="no SQL for q0 in"):
        queries.sql("q0", tmp_path)


def test_each_engine_supplies_its_own_sql():
    assert FlinkEngine.sql_dir() != SparkEngine.sql_dir()
    for cls in (FlinkEngine, SparkEngine):
        assert {p.name for p in cls.sql_dir().iterdir() if p.name.endswith(".sql")} >= {
            f"{q.name}.sql" for q in queries.REGISTERED
        }
    with pytest.raises(UsageError, match="has no SQL files"):
        Engine.sql_dir()


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


def _run_cli(capsys, *args: str) -> tuple[int, str, str]:
    from nexmark.cli.app import main

    with pytest.raises(SystemExit) as done:
        main(["queries", *args])
    captured = capsys.readouterr()
    return done.value.code or 0, captured.out, captured.err


def test_cli_lists_every_query_with_its_state(capsys):
    code, out, _ = _run_cli(capsys)
    assert code == 0
    for q in queries.ALL:
        assert f" {q.name} " in out
    assert "lookup" in out and "windowed, bounded" in out


def test_cli_prints_sql_of_a_selection(capsys):
    code, out, _ = _run_cli(capsys, "q2", "--sql")
    assert code == 0
    assert "MOD(auction, 123) = 0" in out
    assert "q3" not in out


def test_cli_unknown_query_is_a_usage_error(capsys):
    code, _, err = _run_cli(capsys, "q0,q99")
    assert code == 2
    assert "unknown query 'q99'" in err


def test_the_cep_suite():
    from nexmark.protocol.suites import get_suite

    suite = get_suite("cep")
    assert [q.name for q in queries.select(suite.queries)] == ["cep0", "cep1", "cep2", "cep3"]
    assert suite.events == 20_000_000 and suite.state_ttl is None
