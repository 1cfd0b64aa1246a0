"""Every failure of an hsbloom call reaches Python as the hsbloom error its error class names, never a raw
Py4JJavaError, RecursionError or Spark error, with the jar's message (docs/troubleshooting.md).

What each failure is and when it happens (a damaged log entry of every kind, force delete, vacuum and rebuild,
bad system paths) is tested where it lives: jvm/src/test/scala/hsbloom/operations/RecoverySuite.scala. Here the
facade's side of it, on a copy of the healthy index of tests/healthy_index.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from hsbloom import BFIndexConfig, Hyperspace
from hsbloom.errors import CorruptLogError, HsbloomError, IndexNotFoundError, SystemPathError
from healthy_index import NAME, system_path_at

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


def test_a_damaged_log_fails_every_call_with_an_hsbloom_error(spark, copy):
    entry = copy / NAME / "_hsbloom_log" / f"{1:020d}.json"  # 0: CREATING, 1: ACTIVE
    entry.write_text("[" * 100_000)  # deeper than any JSON parser's stack
    with system_path_at(spark, copy):
        hs = Hyperspace(spark)
        fix = f"delete_index('{NAME}', force=True)"
        hsbloom_failure(lambda: hs.refresh_index(NAME, "full"), "log entry", fix)
        hsbloom_failure(lambda: hs.cancel(NAME), fix)
        hsbloom_failure(lambda: hs.delete_index(NAME), fix)
        hsbloom_failure(lambda: hs.restore_index(NAME), fix)
        assert isinstance(hsbloom_failure(lambda: hs.index(NAME), fix), CorruptLogError)
        (row,) = hs.indexes().collect()
        assert row.state == "UNREADABLE" and entry.name in row.damage
        result = hs.verify_index(NAME)
        assert not result.healthy and any(p.file.endswith(entry.name) for p in result.problems)
        hs.delete_index(NAME, force=True)
        err = hsbloom_failure(lambda: hs.delete_index(NAME, force=True), "already deleted")
        assert isinstance(err, IndexNotFoundError)
        hs.vacuum_index(NAME)
        assert isinstance(hsbloom_failure(lambda: hs.index(NAME), "does not exist"), IndexNotFoundError)


def test_bad_system_paths_are_system_path_errors(spark, source, tmp_path):
    regular = tmp_path / "a-file"
    regular.write_text("not a directory")
    for system in (str(regular), "nosuchscheme://host/indexes"):
        previous = spark.conf.get("spark.hsbloom.system.path", None)
        spark.conf.set("spark.hsbloom.system.path", system)
        try:
            hs = Hyperspace(spark)
            create = lambda: hs.create_index(spark.read.parquet(source), BFIndexConfig("paths", ["id"]))  # noqa: E731
            assert isinstance(hsbloom_failure(create, "spark.hsbloom.system.path"), SystemPathError)
            if "://" in system:
                hsbloom_failure(lambda: hs.indexes(), "spark.hsbloom.system.path")
                hsbloom_failure(lambda: hs.index("x"), "spark.hsbloom.system.path")
                hsbloom_failure(lambda: hs.delete_index("x", force=True), "spark.hsbloom.system.path")
        finally:
            spark.conf.set("spark.hsbloom.system.path", previous) if previous else spark.conf.unset(
                "spark.hsbloom.system.path")
    assert regular.read_text() == "not a directory"
    assert Path(source).is_dir()


def test_every_failure_above_was_an_hsbloom_error():
    """Runs last in the module: every failure the tests above provoked was an HsbloomError (hsbloom_failure
    asserted each; this checks they ran)."""
    assert len(raised) >= 12
    assert all(isinstance(e, HsbloomError) for e in raised)
    names = {type(e).__name__ for e in raised}
    assert {"CorruptLogError", "SystemPathError", "IndexNotFoundError"} <= names, names

