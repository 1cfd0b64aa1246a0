"""The golden index of every Spark line (compat/golden_lines.py), used on the running one: an index written by
Spark 3.5's jar serves Spark 4.x and the reverse. Each is found, prunes lookups to the file that holds the key with
the rows hsbloom off gives, follows appended files through an incremental and a full refresh, and is deleted,
restored and vacuumed.
"""

from __future__ import annotations

import json

import pytest

import golden_lines
from compare import rows_off_and_on
from hsbloom import Hyperspace
from hsbloom.explain import file_counts

WRITERS = sorted(p.name for p in golden_lines.GOLDEN.iterdir() if (p / "golden.json").is_file())


def test_a_golden_index_of_spark_3_5_and_of_the_primary_line_are_kept():
    assert {"3.5_2.12", "4.2_2.13"} <= set(WRITERS)


def reads(spark, table, predicate: str) -> int:
    """Files the lookup reads with hsbloom on; its rows must be hsbloom off's."""
    query = lambda: spark.read.parquet(str(table)).where(predicate)  # noqa: E731
    off, on = rows_off_and_on(spark, query)
    assert on == off, predicate
    return file_counts(query())[0]


@pytest.fixture
def own_system_path(spark, system_path, tmp_path):
    """A system path of the test's own (each golden index has the same name), the module's again after it."""
    spark.conf.set("spark.hsbloom.system.path", str(tmp_path / "indexes"))
    yield tmp_path / "indexes"
    spark.conf.set("spark.hsbloom.system.path", str(system_path))


@pytest.mark.parametrize("writer", WRITERS)
def test_an_index_written_on_another_line_is_used_refreshed_and_managed(spark, own_system_path, writer, line):
    golden = golden_lines.GOLDEN / writer
    recorded = json.loads((golden / "golden.json").read_text())
    system_path = own_system_path
    system_path.mkdir()
    table = golden_lines.put_back(golden, system_path)
    hs = Hyperspace(spark)
    name = golden_lines.INDEX
    assert [(r.name, r.state) for r in hs.indexes().collect()] == [(name, "ACTIVE")], recorded["spark"]

    # Used as written: each key in one of the table's four files; the absent key in none.
    assert reads(spark, table, "key = 123") == 1
    assert reads(spark, table, "name = 'ключ-998-日本'") == 1
    assert reads(spark, table, "key = 5000000") == 0
    assert reads(spark, table, "name IS NULL OR key IN (1, 999)") == golden_lines.FILES

    # Refreshed on this line: appended files are indexed, and the old files' filters kept.
    golden_lines.write_table(spark, table, 10_000, 500, 2, mode="append")
    assert hs.refresh_index(name, "incremental").refreshed
    assert reads(spark, table, "key = 10123") == 1
    assert reads(spark, table, "key = 123") == 1
    # A file deleted, then a full refresh: the index rebuilt by this line's jar.
    held = file_counts(spark.read.parquet(str(table)).where("key = 10499"))[0]
    assert held == 1
    (doomed,) = [p for p in table.glob("part-*.parquet")
                 if spark.read.parquet(str(p)).where("key = 10499").count()]
    doomed.unlink()
    assert hs.refresh_index(name).refreshed
    assert reads(spark, table, "key IN (7, 10001)") == 2
    assert reads(spark, table, "key = 10499") == 0

    # Managed: deleted (not used), restored (used again), deleted and vacuumed (gone).
    hs.delete_index(name)
    assert reads(spark, table, "key = 123") == golden_lines.FILES + 1
    hs.restore_index(name)
    assert reads(spark, table, "key = 123") == 1
    hs.delete_index(name)
    hs.vacuum_index(name)
    assert hs.indexes().count() == 0
    assert not [p for p in (system_path / name).iterdir() if p.name.startswith("v__=")]  # no data directory left
