"""A damaged log never locks an index, bad system paths are refused before anything is written, and every
failure of an hsbloom call is an hsbloom error naming the fix (docs/troubleshooting.md).

Uses the healthy index and dataset of tests/healthy_index.py, on copies.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable

import pytest
from pyspark.sql import functions as F

import hsbloom
from hsbloom import BFIndexConfig, Hyperspace
from hsbloom.errors import CorruptLogError, HsbloomError, IndexNotFoundError, SystemPathError
from hsbloom.explain import files_read
from healthy_index import NAME, lookup_rows, system_path_at

raised: list[BaseException] = []  # every exception an hsbloom call raised in this module


def hsbloom_failure(call: Callable[[], Any], *needles: str) -> HsbloomError:
    """Run an hsbloom call that must fail; its error must be an HsbloomError whose message holds `needles`."""
    try:
        call()
    except BaseException as exc:  # noqa: BLE001 - the type is what is checked
        raised.append(exc)
        assert isinstance(exc, HsbloomError), f"{type(exc).__module__}.{type(exc).__name__}: {exc}"
        for needle in needles:
            assert needle in str(exc), (needle, str(exc))
        return exc
    raise AssertionError("the call did not fail")


def log_entry(system: Path, entry_id: int) -> Path:
    return system / NAME / "_hsbloom_log" / f"{entry_id:020d}.json"


LOG_DAMAGE: dict[str, Callable[[Path], None]] = {
    "truncated": lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]),
    "bit flip": lambda p: p.write_bytes(bytes([p.read_bytes()[0] ^ 1]) + p.read_bytes()[1:]),
    "garbage": lambda p: p.write_bytes(os.urandom(300)),
    "unknown log format": lambda p: p.write_text(json.dumps({**json.loads(p.read_text()), "log_format": 99})),
    "100,000 nested [": lambda p: p.write_text("[" * 100_000),
    "empty": lambda p: p.write_bytes(b""),
    "wrong id": lambda p: p.write_text(json.dumps({**json.loads(p.read_text()), "id": 7})),
}


@pytest.mark.parametrize("case", sorted(LOG_DAMAGE))
def test_a_damaged_latest_log_entry_can_be_force_deleted_and_rebuilt(spark, source, expected, copy, case):
    LOG_DAMAGE[case](log_entry(copy, 1))  # 0: CREATING, 1: ACTIVE
    with system_path_at(spark, copy):
        hs = Hyperspace(spark)
        hsbloom.enable(spark)
        assert lookup_rows(spark, source) == expected  # not used: no stable entry is readable
        fix = f"delete_index('{NAME}', force=True)"
        hsbloom_failure(lambda: hs.refresh_index(NAME, "full"), "log entry", fix)
        hsbloom_failure(lambda: hs.refresh_index(NAME, "incremental"), fix)
        hsbloom_failure(lambda: hs.cancel(NAME), fix)
        hsbloom_failure(lambda: hs.delete_index(NAME), fix)
        hsbloom_failure(lambda: hs.restore_index(NAME), fix)
        assert isinstance(hsbloom_failure(lambda: hs.index(NAME), fix), CorruptLogError)
        (row,) = hs.indexes().collect()
        assert row.state == "UNREADABLE" and log_entry(copy, 1).name in row.damage
        result = hs.verify_index(NAME)
        assert not result.healthy and any(p.file.endswith(log_entry(copy, 1).name) for p in result.problems)

        hs.delete_index(NAME, force=True)
        hs.vacuum_index(NAME)
        assert not list((copy / NAME).glob("v__=*")) and hs.indexes().count() == 0
        hsbloom_failure(lambda: hs.index(NAME), "does not exist")
        if case in ("100,000 nested [", "truncated"):  # a build costs seconds: rebuild in two cases
            hs.create_index(spark.read.parquet(source), BFIndexConfig(NAME, ["id", "s"]))
            assert hs.verify_index(NAME).healthy
            assert lookup_rows(spark, source) == expected
            assert files_read(spark.read.parquet(source).where(F.col("id") == 7)) == 1


def test_a_damaged_earlier_entry_is_reported_but_does_not_stop_the_index(spark, source, expected, copy):
    log_entry(copy, 0).write_text("[" * 100_000)
    with system_path_at(spark, copy):
        hs = Hyperspace(spark)
        hsbloom.enable(spark)
        assert lookup_rows(spark, source) == expected
        assert files_read(spark.read.parquet(source).where(F.col("id") == 7)) == 1
        result = hs.verify_index(NAME)
        assert [p.file.rsplit("/", 1)[-1] for p in result.problems] == [log_entry(copy, 0).name]
        hs.delete_index(NAME)  # the latest entry is readable: the ordinary protocol works
        hs.restore_index(NAME)
        assert hs.index(NAME).state.value == "ACTIVE"


def test_a_missing_log_entry_is_reported(spark, copy):
    log_entry(copy, 0).unlink()
    with system_path_at(spark, copy):
        result = Hyperspace(spark).verify_index(NAME)
        assert [p.problem for p in result.problems] == ["log entry is missing (the ids have a gap)"]


def test_force_delete_of_an_active_index_and_of_nothing(spark, copy):
    with system_path_at(spark, copy):
        hs = Hyperspace(spark)
        hs.delete_index(NAME, force=True)
        assert hs.indexes().count() == 0
        hsbloom_failure(lambda: hs.restore_index(NAME), "does not exist")
        err = hsbloom_failure(
            lambda: hs.delete_index(NAME, force=True), "already deleted", "vacuuming it removes its leftover data"
        )
        assert isinstance(err, IndexNotFoundError)
        hs.vacuum_index(NAME)
        hsbloom_failure(lambda: hs.delete_index(NAME, force=True), "does not exist")
        hsbloom_failure(lambda: hs.verify_index("never_created"), "does not exist")


# --- system paths ---------------------------------------------------------------------------


def _create(spark, source: str, system: str) -> HsbloomError:
    with system_path_at(spark, Path(system)) if "://" not in system else _raw_system_path(spark, system):
        hs = Hyperspace(spark)
        return hsbloom_failure(
            lambda: hs.create_index(spark.read.parquet(source), BFIndexConfig("paths", ["id"])), "spark.hsbloom.system.path"
        )


class _raw_system_path:
    """system_path_at for a URI (Path() would mangle 'scheme://')."""

    def __init__(self, spark, uri: str) -> None:
        self.spark, self.uri = spark, uri

    def __enter__(self) -> None:
        self.previous = self.spark.conf.get("spark.hsbloom.system.path", None)
        self.spark.conf.set("spark.hsbloom.system.path", self.uri)

    def __exit__(self, *exc: object) -> None:
        if self.previous is None:  # unset before: unset again (a session's conf takes no None)
            self.spark.conf.unset("spark.hsbloom.system.path")
        else:
            self.spark.conf.set("spark.hsbloom.system.path", self.previous)


def test_bad_system_paths_are_refused_before_anything_is_written(spark, source, tmp_path):
    regular = tmp_path / "a-file"
    regular.write_text("not a directory")
    assert "regular file" in str(_create(spark, source, str(regular)))
    assert "lies under" in str(_create(spark, source, str(regular / "below")))
    assert regular.read_text() == "not a directory"
    # Permission bits do not stop root (the tests' user here), so a directory where nothing can be created,
    # even by root, stands in for a read-only one: the check writes a probe file rather than reading modes.
    assert "could not be created" in str(_create(spark, source, "/proc/hsbloom-cannot-exist/system"))
    err = _create(spark, source, "nosuchscheme://host/indexes")
    assert isinstance(err, SystemPathError) and "nosuchscheme" in str(err)
    with _raw_system_path(spark, "nosuchscheme://host/indexes"):
        hsbloom_failure(lambda: Hyperspace(spark).indexes(), "spark.hsbloom.system.path")
        hsbloom_failure(lambda: Hyperspace(spark).index("x"), "spark.hsbloom.system.path")
        hsbloom_failure(lambda: Hyperspace(spark).delete_index("x", force=True), "spark.hsbloom.system.path")


def test_a_system_path_inside_or_containing_the_source_is_refused(spark, source):
    before = sorted(p.name for p in Path(source).iterdir())
    assert "inside the source" in str(_create(spark, source, str(Path(source) / "_indexes")))
    assert "inside the source" in str(_create(spark, source, source))
    assert "contains the source" in str(_create(spark, source, str(Path(source).parent)))
    assert sorted(p.name for p in Path(source).iterdir()) == before
    assert spark.read.parquet(source).count() > 0


def test_every_failure_above_was_an_hsbloom_error():
    """Runs last in the module: every failure the tests above provoked was an HsbloomError, never a raw
    Py4JJavaError, RecursionError or Spark error (hsbloom_failure asserted each; this checks they ran)."""
    assert len(raised) >= 20
    assert all(isinstance(e, HsbloomError) for e in raised)
    names = {type(e).__name__ for e in raised}
    assert {"CorruptLogError", "SystemPathError", "IndexNotFoundError"} <= names, names
