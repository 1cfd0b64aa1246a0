"""A crafted log entry never becomes a path, a size or a class (docs/security.md).

Whoever can write the system path can write a log entry. These tests play that attacker: entries whose
versions are traversal strings, absolute paths, negative, huge or of the wrong type, in every numeric field;
an entry far larger than any hsbloom writes; a link where a data directory should be. Every operation on
such an index either refuses with CorruptLogError (naming the entry and the fix) or ignores the damage, and a
victim directory outside the index always survives.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest
from pyspark.sql import functions as F

import hsbloom
from hsbloom import BFIndexConfig, Hyperspace, jar
from hsbloom.errors import CorruptLogError, HsbloomError
from hsbloom.explain import file_counts
from hsbloom.index import stored
from hsbloom.index.log import LogEntry

from healthy_index import NAME, system_path_at

# Values no numeric field of an entry may hold: a traversal, an absolute path, a negative, a huge number (in
# and beyond a Long), a fraction, a bool, containers.
BAD_NUMBERS = ["0/../../../victim", "/tmp/victim", -1, -5, 10**30, 2**63, 1.5, True, [1], {"a": 1}]


def _entry_json(log_dir: Path) -> dict:
    return json.loads(sorted(log_dir.glob("*.json"))[-1].read_text())


def _set(data: dict, path: str, value) -> dict:
    """`data` with the field at dotted `path` (a list element as `[0]`) set to `value`."""
    data = json.loads(json.dumps(data))
    node = data
    keys = path.split(".")
    for key in keys[:-1]:
        node = node[int(key[1:-1])] if key.startswith("[") else node.setdefault(key, {})
    last = keys[-1]
    if last.startswith("["):
        node[int(last[1:-1])] = value
    else:
        node[last] = value
    return data


# Every numeric field of an entry: in the entry itself, its writer, its data parts, its source, its summary and
# its pending changes.
NUMERIC_FIELDS = [
    "id", "timestamp_ms", "writer.pid", "data_version", "data_layout", "data_parts.[0]", "dropped_file_ids.[0]",
    "source.delta_version", "summary.num_files", "summary.num_rows", "summary.index_bytes",
    "summary.columns.id.num_rows", "summary.columns.id.ndv", "summary.columns.id.global_filter_bytes",
    "summary.file_fpp", "config.expected_num_items", "pending.checked_ms", "pending.deleted_file_ids.[0]", "pending.appended.[0].size",
]


@pytest.fixture(scope="module")
def active_entry(healthy) -> dict:
    """The healthy index's ACTIVE entry with every optional numeric field filled in, so each can be damaged."""
    data = _entry_json(healthy / NAME / "_hsbloom_log")
    data["data_parts"] = [data["data_version"]]
    data["dropped_file_ids"] = [1]
    data["source"]["delta_version"] = 3
    data["pending"] = {"checked_ms": 1, "delta_version": None, "deleted_file_ids": [2],
                       "appended": [{"path": "file:/x/part-0.parquet", "size": 10, "mtime": 1}]}
    LogEntry.from_json(json.dumps(data))  # valid as filled in
    return data


@pytest.mark.parametrize("field", NUMERIC_FIELDS)
def test_every_numeric_field_refuses_values_that_are_not_integers_in_range(spark, active_entry, field):
    """Python's parser and the jar's (which queries use) refuse the same values, naming the field."""
    for value in BAD_NUMBERS:
        crafted = json.dumps(_set(active_entry, field, value))
        with pytest.raises(ValueError):
            LogEntry.from_json(crafted)
        if not field.startswith(("pending", "summary.num_", "summary.index_bytes", "writer", "timestamp", "data_layout",
                                 "config")):
            # the jar reads the fields queries need: these it refuses as well
            with pytest.raises(Exception, match="must be"):
                jar.jar_class(spark, "index_log").parse(crafted, NAME)


def test_a_format_that_is_not_one_hsbloom_indexes_is_never_a_class_to_load(spark, active_entry):
    for fmt in ("org.apache.spark.sql.execution.datasources.v2.text.TextDataSourceV2", "text", "", 7):
        crafted = json.dumps(_set(active_entry, "source.format", fmt))
        with pytest.raises(ValueError, match="source.format must be one of parquet, orc, csv, json, delta"):
            LogEntry.from_json(crafted)
        with pytest.raises(Exception, match="source.format must be (one of|a string)"):
            jar.jar_class(spark, "index_log").parse(crafted, NAME)


def test_data_parts_must_be_distinct_bounded_and_end_with_the_version(active_entry):
    version = active_entry["data_version"]
    for parts in ([version, version], [version + 1], list(range(stored.MAX_DATA_PARTS)) + [version]):
        with pytest.raises(ValueError, match="data_parts"):
            LogEntry.from_json(json.dumps(active_entry | {"data_parts": parts}))


def test_the_largest_version_still_leaves_room_for_the_next(active_entry):
    assert LogEntry.from_json(json.dumps(active_entry | {"data_version": stored.MAX_DATA_VERSION, "data_parts": None}))
    with pytest.raises(ValueError, match="data_version must be an integer from 0 to 2147483646"):
        LogEntry.from_json(json.dumps(active_entry | {"data_version": stored.MAX_DATA_VERSION + 1}))


# --- every operation against a crafted entry, with a victim outside the index --------------------------------


@pytest.fixture
def victim(tmp_path) -> Path:
    """A directory beside the system path that a traversal from the index would reach."""
    directory = tmp_path / "victim"
    directory.mkdir()
    (directory / "precious.txt").write_text("keep me")
    return directory


def _survives(victim: Path) -> None:
    assert (victim / "precious.txt").read_text() == "keep me", "a directory outside the index was changed"


def _append_raw(log_dir: Path, data: dict) -> Path:
    ids = sorted(int(p.name[:-5]) for p in log_dir.glob("*.json"))
    entry_id = ids[-1] + 1
    path = log_dir / f"{entry_id:020d}.json"
    path.write_text(json.dumps(data | {"id": entry_id}))
    return path


def _operations(hs: Hyperspace, df):
    """Every operation a user can run on the index, by name."""
    return {
        "create": lambda: hs.create_index(df, BFIndexConfig(NAME, ["id"])),
        "refresh full": lambda: hs.refresh_index(NAME, "full"),
        "refresh incremental": lambda: hs.refresh_index(NAME, "incremental"),
        "refresh quick": lambda: hs.refresh_index(NAME, "quick"),
        "delete": lambda: hs.delete_index(NAME),
        "restore": lambda: hs.restore_index(NAME),
        "vacuum": lambda: hs.vacuum_index(NAME),
        "cancel": lambda: hs.cancel(NAME),
        "index": lambda: hs.index(NAME),
        "verify": lambda: hs.verify_index(NAME),
        "indexes": lambda: hs.indexes().collect(),
    }


@pytest.mark.parametrize("state", ["REFRESHING", "DELETING", "VACUUMING", "ACTIVE"])
def test_no_operation_follows_a_traversal_in_a_crafted_entry(spark, copy, source, victim, state):
    """The attack of issue 33: a transient entry (or an ACTIVE one) whose data version walks out of the index,
    written by a writer that looks dead (this host, a pid that is gone), so recovery would act on it."""
    log_dir = copy / NAME / "_hsbloom_log"
    crafted = _entry_json(log_dir) | {
        "state": state, "data_version": "0/../../../victim", "data_parts": ["0/../../../victim"],
        "writer": {"host": socket.gethostname(), "pid": 2**22 + 1, "operation_id": "x"},
    }
    entry_path = _append_raw(log_dir, crafted)
    assert (copy / NAME / "v__=0" / ".." / ".." / ".." / "victim").resolve() == victim.resolve()
    with system_path_at(spark, copy):
        hs = Hyperspace(spark)
        for name, operation in _operations(hs, spark.read.parquet(source)).items():
            try:
                operation()
            except CorruptLogError as exc:  # the damage, named with its file and the fix
                assert entry_path.name in str(exc) and "delete_index" in str(exc), (name, str(exc))
            except HsbloomError:
                pass  # e.g. "nothing to cancel", "already exists": refused for its own reason
            _survives(victim)
        hsbloom.enable(spark)
        assert sorted(r.id for r in spark.read.parquet(source).where("id = 7").collect()) == [7]
        # The way out the error names: a forced delete, then vacuum, removes the index and nothing else.
        hs.delete_index(NAME, force=True)
        hs.vacuum_index(NAME)
    _survives(victim)
    assert not list((copy / NAME).glob("v__=*"))


def test_a_link_where_a_data_directory_should_be_is_removed_as_a_link(spark, copy, victim):
    """vacuum removes data directories the version does not read; one that is a link to a directory outside the
    index loses the link, never what it points to; so does a link inside one. The same for recovery of a dead
    writer's transient entry."""
    os.symlink(victim, copy / NAME / "v__=41")
    (copy / NAME / "v__=40").mkdir()
    os.symlink(victim, copy / NAME / "v__=40" / "files")  # a link inside a data directory: removed as a link too
    log_dir = copy / NAME / "_hsbloom_log"
    _append_raw(log_dir, _entry_json(log_dir) | {
        "state": "REFRESHING", "data_version": 42, "data_parts": None,
        "writer": {"host": socket.gethostname(), "pid": 2**22 + 1, "operation_id": "x"},
    })
    os.symlink(victim, copy / NAME / "v__=42")
    with system_path_at(spark, copy):
        hs = Hyperspace(spark)
        hs.vacuum_index(NAME)  # first recovers the dead writer's REFRESHING (removing v__=42), then vacuums v__=41
        assert hs.index(NAME).state.value == "ACTIVE"
    assert not any(os.path.lexists(copy / NAME / f"v__={v}") for v in (40, 41, 42))
    _survives(victim)


def test_an_index_directory_that_is_a_link_is_refused_for_deletes(spark, copy, victim, tmp_path):
    """A link in place of the index directory would make its `v__=N` children someone else's directories."""
    (victim / "v__=0").mkdir()
    (victim / "v__=0" / "precious.txt").write_text("keep me")
    system = tmp_path / "linked-system"
    system.mkdir()
    os.symlink(victim, system / NAME)
    (victim / "_hsbloom_log").mkdir()
    for entry in sorted((copy / NAME / "_hsbloom_log").glob("*.json")):
        (victim / "_hsbloom_log" / entry.name).write_text(entry.read_text())
    with system_path_at(spark, system):
        hs = Hyperspace(spark)
        hs.delete_index(NAME)
        with pytest.raises(HsbloomError, match="is a symbolic link; hsbloom does not follow links out of the system path"):
            hs.vacuum_index(NAME)
    assert (victim / "v__=0" / "precious.txt").read_text() == "keep me"


def test_an_entry_larger_than_any_hsbloom_writes_is_damage_not_read_whole(spark, copy):
    log_dir = copy / NAME / "_hsbloom_log"
    data = _entry_json(log_dir) | {"message": "x" * (stored.MAX_LOG_ENTRY_BYTES + 1)}
    path = _append_raw(log_dir, data)
    with system_path_at(spark, copy):
        hs = Hyperspace(spark)
        # Readers skip a newest entry they cannot read (it may be mid-write): the index is still listed and used.
        assert hs.index(NAME).log_id == int(path.name[:-5]) - 1
        assert [r.name for r in hs.indexes().collect()] == [NAME]
        with pytest.raises(CorruptLogError, match=f"{path.name} is larger than {stored.MAX_LOG_ENTRY_BYTES} bytes"):
            hs.delete_index(NAME)


def test_python_and_the_jar_share_the_bounds(spark):
    names = json.loads(jar.jar_class(spark, "layout").json())
    assert names["max_data_version"] == stored.MAX_DATA_VERSION
    assert names["max_file_id"] == stored.MAX_FILE_ID
    assert names["max_data_parts"] == stored.MAX_DATA_PARTS
    assert names["max_log_entry_bytes"] == stored.MAX_LOG_ENTRY_BYTES
    assert tuple(names["source_formats"]) == stored.SOURCE_FORMATS


# --- secrets ---------------------------------------------------------------------------------------------------

SECRETS = {
    "fs.s3a.secret.key": "S3CRET-value-4711",
    "parquet.encryption.key.list": "k1:AAECAwQFBgcICQoLDA0ODw==",
    "my.service.Token": "tok-0x5eed-secret",
    "spark.hadoop.fs.azure.sas.container": "sv=2024&sig=SASSIGNATURE",
}


def test_no_key_or_credential_option_reaches_any_index_file(spark, tmp_path, system_path):
    """Credential and key options are never written; an unknown option is written only as a keyed hash, and a
    scan is still covered only with its same value; a value-deciding option is recorded as it is."""
    directory = str(tmp_path / "events")
    spark.range(0, 400, numPartitions=4).select("id", F.col("id").cast("string").alias("s")).write.parquet(directory)

    def read(custom: str):
        return spark.read.options(**SECRETS, mergeSchema="false", myCustomOption=custom).parquet(directory)

    hs = Hyperspace(spark)
    hs.create_index(read("custom-value-42"), BFIndexConfig("secrets", ["id"], fpp=1e-6, global_filter=False))
    index_files = [p for p in (system_path / "secrets").rglob("*") if p.is_file()]
    assert index_files
    for path in index_files:
        data = path.read_bytes()
        for value in [*SECRETS.values(), "custom-value-42"]:
            assert value.encode() not in data, f"{value} written into {path}"
    source = _entry_json(system_path / "secrets" / "_hsbloom_log")["source"]
    assert source["options"] == {"mergeschema": "false"}
    assert set(source["hashed_options"]) == {"mycustomoption"}
    hsbloom.enable(spark)
    try:
        same = read("custom-value-42").where("id = 7")
        assert sorted(r.id for r in same.collect()) == [7]
        assert file_counts(same)[2] == 3  # 3 of the 4 files pruned: the hash matched
        other = read("another-value").where("id = 7")
        assert file_counts(other)[0] == 4  # another value of an unknown option: not covered
        # A refresh reads the source with the recorded options only (the others are not known), and records them.
        spark.range(400, 500, numPartitions=1).select("id", F.col("id").cast("string").alias("s")) \
            .write.mode("append").parquet(directory)
        assert hs.refresh_index("secrets", "full").refreshed
        again = _entry_json(system_path / "secrets" / "_hsbloom_log")["source"]
        assert again["options"] == {"mergeschema": "false"} and "mycustomoption" not in again["hashed_options"]
    finally:
        hsbloom.disable(spark)
