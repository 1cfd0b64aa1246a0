"""A crafted log entry never becomes a path, a size or a class (docs/security.md).

Whoever can write the system path can write a log entry. These tests play that attacker: they take an entry as
the jar wrote it and write changed JSON into the log: versions that are traversal strings, absolute paths,
negative, huge or of the wrong type, in every numeric field, and a wrong value in every other field; an entry far
larger than any hsbloom writes; a link where a data directory should be. The jar's one parser of entries
(hsbloom.format.LogJson.parse) refuses each bad value naming its field, and every operation on such an index (SQL
statements, through Hyperspace) either refuses with CorruptLogError (naming the entry and the fix) or ignores the
damage, and a victim directory outside the index always survives.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterator

import pytest
from pyspark.errors import IllegalArgumentException
from pyspark.sql import functions as F

import hsbloom
from hsbloom import BFIndexConfig, Hyperspace
from hsbloom.errors import CorruptLogError, HsbloomError
from hsbloom.explain import file_counts

from healthy_index import NAME, system_path_at
from jar_log import local_host
from jvm_classes import jvm_class

# Values no numeric field of an entry may hold: a traversal, an absolute path, a negative, a huge number (in
# and beyond a Long), a fraction, a bool, containers.
BAD_NUMBERS = ["0/../../../victim", "/tmp/victim", -1, -5, 10**30, 2**63, 1.5, True, [1], {"a": 1}]
# The writer of a crafted entry: this host (as the jar names it) and a pid above any Linux's pid_max, so no
# process has it: a writer that looks dead, whose operation recovery would undo.
DEAD_PID = 2**22 + 1


def layout(spark, constant: str) -> Any:
    """A constant of the jar's hsbloom.format.Layout (MaxDataVersion, MaxEntryDataParts, ...)."""
    return getattr(jvm_class(spark, "layout"), constant)()


def parse(spark, entry: dict) -> Any:
    """`entry` as the jar reads it: hsbloom.format.LogJson.parse, the one parser of log entries."""
    return jvm_class(spark, "log_json").parse(json.dumps(entry))


def refusal(spark, entry: dict) -> str:
    """Why the jar refuses `entry`: the message of its IllegalArgumentException (which PySpark raises as its own
    IllegalArgumentException); fails if it reads the entry."""
    try:
        parse(spark, entry)
    except IllegalArgumentException as exc:
        return str(exc).splitlines()[0]
    raise AssertionError("the jar read the entry")


Key = str | int  # an object's field, or an array's element
FieldPath = tuple[Key, ...]


def _path(field: str) -> FieldPath:
    """A dotted field name as a path (a list element as `[0]`)."""
    return tuple(int(key[1:-1]) if key.startswith("[") else key for key in field.split("."))


def dotted(path: FieldPath) -> str:
    """`path` as a dotted field name (a list element as `[0]`)."""
    return ".".join(f"[{key}]" if isinstance(key, int) else key for key in path)


def jar_name(path: FieldPath) -> str:
    """How the jar's refusal names the field at `path`: dotted, and "an element of X[.rest]" inside an array."""
    name = ""
    for key in path:
        name = f"an element of {name}" if isinstance(key, int) else f"{name}.{key}" if name else key
    return name


def _entry_json(log_dir: Path) -> dict:
    return json.loads(sorted(log_dir.glob("*.json"))[-1].read_text())


def _set(data: dict, field: str | FieldPath, value: Any) -> dict:
    """`data` with the field at `field` (dotted, a list element as `[0]`, or a path) set to `value`."""
    keys = _path(field) if isinstance(field, str) else field
    data = json.loads(json.dumps(data))
    node = data
    for key in keys[:-1]:
        node = node[key] if isinstance(key, int) else node.setdefault(key, {})
    node[keys[-1]] = value
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
def active_entry(spark, healthy) -> dict:
    """The healthy index's ACTIVE entry as the jar wrote it, with every optional numeric field filled in, so each
    can be damaged."""
    data = _entry_json(healthy / NAME / "_hsbloom_log")
    data["data_parts"] = [data["data_version"]]
    data["dropped_file_ids"] = [1]
    data["source"]["delta_version"] = 3
    data["pending"] = {"checked_ms": 1, "delta_version": None, "deleted_file_ids": [2],
                       "appended": [{"path": "file:/x/part-0.parquet", "size": 10, "mtime": 1}]}
    parse(spark, data)  # valid as filled in
    return data


@pytest.mark.parametrize("field", NUMERIC_FIELDS)
def test_every_numeric_field_refuses_values_that_are_not_integers_in_range(spark, active_entry, field):
    """The jar's parser, which every operation and every query reads entries with, refuses each value, naming
    the field."""
    for value in BAD_NUMBERS:
        message = refusal(spark, _set(active_entry, field, value))
        assert f"{jar_name(_path(field))} must be" in message, (value, message)


@pytest.fixture(scope="module")
def complete_entry(spark, active_entry) -> dict:
    """`active_entry` with every field the jar reads present and not null (the optional ones filled in, the map
    fields holding an entry, the legacy file list of data layout 3), each a value the jar reads."""
    data = json.loads(json.dumps(active_entry))
    data["message"] = "refreshed"
    data["pending"]["delta_version"] = 4
    data["config"] |= {"expected_num_items": 1000, "fpp": 0.01, "granularity": "file", "substring_columns": ["name"],
                       "ngram_sizes": {"name": 3}}
    source = data["source"]
    source |= {"table": "default.events", "user_schema": '{"type":"struct","fields":[]}', "partition_columns": ["p"],
               "options": {"mergeschema": "false"}, "hashed_options": {"mycustomoption": "6f3a"},
               "read_facts": source["read_facts"] or {"spark.sql.caseSensitive": "false"},
               "files": [{"id": 0, "path": "file:/x/part-0.parquet", "size": 10, "mtime": 1}]}
    data["summary"]["adoption"] = {"adopted_files": 0, "hashed_files": {"no_native_filter": 6}}
    nulls = [dotted(path) for path, value in _nodes(data) if value is None]
    assert not nulls, nulls
    parse(spark, data)
    return data


def _nodes(node: Any, path: FieldPath = ()) -> Iterator[tuple[FieldPath, Any]]:
    """Every field under `node` (an array's elements too), objects and arrays included, with its path."""
    children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
    for key, child in children:
        yield (*path, key), child
        yield from _nodes(child, (*path, key))


def _bad_values(value: Any, max_text: int) -> list[Any]:
    """Values of another JSON type than `value`'s, or out of the range of any field of its type."""
    if isinstance(value, bool):
        return ["true", 1, 0, [True]]
    if isinstance(value, int):
        return BAD_NUMBERS
    if isinstance(value, float):  # a probability
        return [0, 1, 0.0, 1.0, -0.5, 1.5, 10**30, "0.01", True, [0.01]]
    if isinstance(value, str):
        return [7, 0.5, True, ["x"], {"x": "y"}, "x" * (max_text + 1)]
    if isinstance(value, list):
        return ["x", 7, {"x": 1}]
    return ["x", 7, [value]]  # an object


# Values of the right type that a field must not hold either, and how the jar names the field then.
SEMANTIC: dict[str, tuple[list[Any], str]] = {
    "log_format": ([0, 2, "1"], "log format"),
    "state": (["ACTIV", "active", ""], "state must be one of CREATING, ACTIVE"),
    "source.format": (["text", "", "org.apache.spark.sql.execution.datasources.v2.text.TextDataSourceV2"],
                      "source.format must be one of parquet, orc, csv, json, delta"),
    "config.index_name": (["..", "a/b", "", ".hidden", "x" * 129], "config: index_name"),
    "config.indexed_columns": ([[], ["id", "id"]], "config: indexed_columns"),
    "config.indexed_columns.[0]": ([""], "config: indexed_columns must hold non-empty strings"),
    "config.expected_num_items": ([0], "config: expected_num_items must be positive"),
    "config.granularity": (["rows", "FILE"], "config: granularity must be one of 'file', 'row_group'"),
    "config.substring_columns": ([["name", "name"]], "config: substring_columns lists [name] more than once"),
    "config.substring_columns.[0]": ([""], "config: substring_columns must hold non-empty strings"),
    "config.ngram_sizes.name": ([0, 1, 9], "config: ngram_size must be from 2 to 8 bytes"),
    "data_version": ([2**31 - 1], "data_version must be an integer from 0 to 2147483646"),
    "data_layout": ([1001], "data_layout must be an integer from 0 to 1000"),
    "writer.pid": ([2**31], "writer.pid must be an integer from 0 to 2147483647"),
    "dropped_file_ids.[0]": ([2**31], "an element of dropped_file_ids must be an integer from 0 to 2147483647"),
}


def test_the_jar_refuses_every_bad_value_of_every_field_it_reads(spark, complete_entry):
    """Every field of an entry (each one the jar writes, and the legacy file list it still reads), set to a value
    of another JSON type, out of range, or of the right type but meaningless, is refused by the one parser, naming
    the field (or, for the config, what BFIndexConfig refuses), and never read as something else."""
    max_text = int(jvm_class(spark, "log_json").MaxText())
    wrong: list[tuple[str, Any, str]] = []  # (field, value, what the jar said)
    fields = list(_nodes(complete_entry))
    for path, value in fields:
        needle = "log format" if path == ("log_format",) else f"{jar_name(path)} must be"
        extra, extra_needle = SEMANTIC.get(dotted(path), ([], needle))
        for bad, expected in [(v, needle) for v in _bad_values(value, max_text)] + [(v, extra_needle) for v in extra]:
            try:
                message = refusal(spark, _set(complete_entry, path, bad))
            except AssertionError as exc:
                message = str(exc)
            if expected not in message:
                shown = bad if not isinstance(bad, str) or len(bad) < 100 else "<long text>"
                wrong.append((dotted(path), shown, message))
    unknown = refusal(spark, _set(complete_entry, "config.bloom", 1))
    assert "unknown config fields bloom" in unknown, unknown
    assert not wrong, "\n".join(map(str, wrong))
    # What was checked: every field, of the entry, its writer, config, source, summary and pending changes.
    paths = {path for path, _ in fields}
    assert {_path(field) for field in SEMANTIC} <= paths
    assert {_path(f) for f in (
        "id", "writer.pid", "config.fpp", "config.global_filter", "source.read_facts", "source.files.[0].mtime",
        "summary.columns.id.num_nulls", "summary.adoption.hashed_files.no_native_filter", "pending.appended.[0].path",
        "message", "hsbloom_version", "data_path",
    )} <= paths, sorted(map(dotted, paths))
    assert len(fields) >= 70, len(fields)


def test_a_format_that_is_not_one_hsbloom_indexes_is_never_a_class_to_load(spark, active_entry):
    for fmt in ("org.apache.spark.sql.execution.datasources.v2.text.TextDataSourceV2", "text", ""):
        message = refusal(spark, _set(active_entry, "source.format", fmt))
        assert "source.format must be one of parquet, orc, csv, json, delta" in message, message
    assert "source.format must be a string" in refusal(spark, _set(active_entry, "source.format", 7))


def test_data_parts_must_be_distinct_bounded_and_end_with_the_version(spark, active_entry):
    version = active_entry["data_version"]
    for parts in ([version, version], [version + 1], list(range(layout(spark, "MaxEntryDataParts"))) + [version]):
        assert "data_parts" in refusal(spark, active_entry | {"data_parts": parts})


def test_the_largest_version_still_leaves_room_for_the_next(spark, active_entry):
    largest = layout(spark, "MaxDataVersion")
    assert largest == 2**31 - 2
    assert parse(spark, active_entry | {"data_version": largest, "data_parts": None}).dataVersion().get() == largest
    message = refusal(spark, active_entry | {"data_version": largest + 1})
    assert "data_version must be an integer from 0 to 2147483646" in message


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
        "writer": {"host": local_host(spark), "pid": DEAD_PID, "operation_id": "x"},
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
        "writer": {"host": local_host(spark), "pid": DEAD_PID, "operation_id": "x"},
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
    largest = layout(spark, "MaxLogEntryBytes")
    data = _entry_json(log_dir) | {"message": "x" * (largest + 1)}
    path = _append_raw(log_dir, data)
    with system_path_at(spark, copy):
        hs = Hyperspace(spark)
        # Readers skip a newest entry they cannot read (it may be mid-write): the index is still listed and used.
        assert hs.index(NAME).log_id == int(path.name[:-5]) - 1
        assert [r.name for r in hs.indexes().collect()] == [NAME]
        with pytest.raises(CorruptLogError, match=f"{path.name} is larger than {largest} bytes"):
            hs.delete_index(NAME)


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
