"""The operation log read without the jar: the latest stable entry of an index, every field checked.

The jar's `LogJson.scala` and `IndexLog.scala` are the specification (docs/design/log.md and
docs/design/format.md): entries are `_hsbloom_log/<id, 20 digits>.json`; the newest entry may be mid-write
and is skipped when unreadable, an older unreadable one hides the index's state and makes it unusable; the
latest entry in a stable state describes the index. An entry is input, not trusted state: every field used
is checked for type and range, and nothing of it becomes a path except the data version, a bounded integer.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Optional

import pyarrow.fs as pafs

from hsbloom.readers.substring import MAX_N, MIN_N

LOG_DIR = "_hsbloom_log"
LOG_FORMAT = 1
DATA_LAYOUT = 4
MAX_TEXT = 64 * 1024
MAX_DATA_VERSION = (1 << 31) - 2
MAX_FILE_ID = (1 << 31) - 1
MAX_DATA_PARTS = 1024
MAX_ENTRY_BYTES = 8 * 1024 * 1024
MAX_LONG = (1 << 63) - 1
STATES = ("CREATING", "ACTIVE", "DELETING", "DELETED", "RESTORING", "VACUUMING", "REFRESHING", "DOESNOTEXIST")
STABLE = ("ACTIVE", "DELETED", "DOESNOTEXIST")
SOURCE_FORMATS = ("parquet", "orc", "csv", "json", "delta")
DEFAULT_NGRAM_SIZE = 3
_ENTRY_NAME = re.compile(r"^([0-9]{1,20})\.json$")


class UnusableIndex(Exception):
    """The index cannot be used (its reason is the message): every file is kept."""


@dataclass(frozen=True)
class Version:
    """What the latest ACTIVE entry says: enough to find the data and to match the source."""

    entry_id: int
    indexed_columns: tuple
    granularity: str
    format: str
    root_paths: tuple
    options: dict
    hashed_options: dict
    user_schema: Optional[str]
    delta_version: Optional[int]
    schema: dict
    partition_columns: tuple
    read_facts: dict
    data_parts: tuple
    dropped_file_ids: frozenset
    num_files: int
    # The columns with a substring filter (docs/substring.md), stored under "ngram{n}({column})", and each one's n.
    substring_columns: tuple = ()
    ngram_sizes: dict = field(default_factory=dict)
    # Whether each substring column also has a filter of its lower-cased values, stored under "ngram{n}(lower(c))".
    substring_case_insensitive: bool = False

    def gram_key(self, column: str, lower: bool = False) -> Optional[str]:
        """The file tables' `column` field of `column`'s substring filter (`BFIndexConfig.gramKey`), or of its filter
        of lower-cased values; None: none."""
        if column not in self.substring_columns or (lower and not self.substring_case_insensitive):
            return None
        return f"ngram{self.ngram_sizes[column]}({f'lower({column})' if lower else column})"


def _bad(what: str, value: Any, must: str) -> UnusableIndex:
    return UnusableIndex(f"{what} must be {must}, got {json.dumps(value)[:60] if _jsonable(value) else value!r}")


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def _long(value: Any, what: str, maximum: int = MAX_LONG) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= maximum:
        raise _bad(what, value, f"an integer from 0 to {maximum}")
    return value


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        raise _bad(what, value, f"a string of at most {MAX_TEXT} characters")
    return value


def _obj(value: Any, what: str) -> dict:
    if not isinstance(value, dict):
        raise _bad(what, value, "a JSON object")
    return value


def _optional(o: dict, name: str) -> Any:
    return o.get(name)


def _texts(o: dict, name: str, what: str) -> tuple:
    value = o.get(name)
    if value is None:
        return ()
    if not isinstance(value, list):
        raise _bad(what, value, "a JSON array")
    return tuple(_text(v, f"an element of {what}") for v in value)


def _longs(o: dict, name: str, what: str, maximum: int) -> tuple:
    value = o.get(name)
    if value is None:
        return ()
    if not isinstance(value, list):
        raise _bad(what, value, "a JSON array")
    return tuple(_long(v, f"an element of {what}", maximum) for v in value)


def _substring_columns(o: dict) -> tuple:
    columns = _texts(o, "substring_columns", "config.substring_columns")
    if any(not c for c in columns) or len(set(columns)) != len(columns):
        raise _bad("config.substring_columns", list(columns)[:10], "distinct non-empty column names")
    return columns


def _ngram_sizes(o: dict, columns: tuple) -> dict:
    """Each substring column's n: `ngram_sizes`, or (an entry written when one n served every column) `ngram_size`."""

    def size(value: Any, what: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not MIN_N <= value <= MAX_N:
            raise _bad(what, value, f"an integer from {MIN_N} to {MAX_N}")
        return value

    sizes = o.get("ngram_sizes")
    if sizes is None:
        one = o.get("ngram_size")
        n = DEFAULT_NGRAM_SIZE if one is None else size(one, "config.ngram_size")
        return {c: n for c in columns}
    sizes = _obj(sizes, "config.ngram_sizes")
    if set(sizes) != set(columns):
        raise _bad("config.ngram_sizes", sorted(sizes)[:10], "an n for each substring column and no other")
    return {c: size(sizes[c], f"config.ngram_sizes.{c}") for c in columns}


def _boolean(o: dict, name: str) -> bool:
    """An optional true/false field of the config (absent or null: false, as the jar reads it)."""
    value = o.get(name)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise _bad(f"config.{name}", value, "true or false")
    return value


def _text_map(o: dict, name: str, what: str) -> dict:
    value = o.get(name)
    if value is None:
        return {}
    return {_text(k, f"a key of {what}"): _text(v, f"{what}.{k}") for k, v in _obj(value, what).items()}


def parse(text: str) -> tuple[str, Optional[Version]]:
    """(state, the version when the state is ACTIVE) of one entry; UnusableIndex names the first bad field."""
    try:
        root = json.loads(text, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
    except ValueError as exc:
        raise UnusableIndex(f"not JSON ({str(exc)[:120]})") from None
    root = _obj(root, "the entry")
    if root.get("log_format") != LOG_FORMAT or isinstance(root.get("log_format"), bool):
        raise UnusableIndex(f"log format {root.get('log_format')!r}; this reader reads format {LOG_FORMAT}")
    state = root.get("state")
    if state not in STATES:
        raise _bad("state", state, "one of " + ", ".join(STATES))
    entry_id = _long(root.get("id"), "id")
    if state != "ACTIVE":
        return state, None
    config = _obj(root.get("config"), "config")
    columns = _texts(config, "indexed_columns", "config.indexed_columns")
    if not columns:
        raise _bad("config.indexed_columns", config.get("indexed_columns"), "a non-empty array")
    granularity = config.get("granularity") or "file"
    if granularity not in ("file", "row_group"):
        raise _bad("config.granularity", granularity, "file or row_group")
    source = _obj(root.get("source"), "source")
    fmt = _text(source.get("format"), "source.format")
    if fmt not in SOURCE_FORMATS:
        raise _bad("source.format", fmt, "one of " + ", ".join(SOURCE_FORMATS))
    delta_version = source.get("delta_version")
    data_version = _long(root.get("data_version"), "data_version", MAX_DATA_VERSION)
    parts = _longs(root, "data_parts", "data_parts", MAX_DATA_VERSION) or (data_version,)
    if len(parts) > MAX_DATA_PARTS or parts[-1] != data_version or len(set(parts)) != len(parts):
        raise _bad("data_parts", list(parts)[:10], f"distinct, at most {MAX_DATA_PARTS}, ending with data_version")
    layout = root.get("data_layout")
    if layout is not None:
        _long(layout, "data_layout", 1000)
    if layout != DATA_LAYOUT:
        raise UnusableIndex(
            f"its data is stored in layout {layout} (this reader reads layout {DATA_LAYOUT}): refresh the index "
            "with mode='full'"
        )
    summary = root.get("summary")
    num_files = _long(_obj(summary, "summary").get("num_files", 0), "summary.num_files") if summary else 0
    substring_columns = _substring_columns(config)
    ngram_sizes = _ngram_sizes(config, substring_columns)
    version = Version(
        entry_id=entry_id,
        indexed_columns=columns,
        granularity=granularity,
        format=fmt,
        root_paths=_texts(source, "root_paths", "source.root_paths"),
        options=_text_map(source, "options", "source.options"),
        hashed_options=_text_map(source, "hashed_options", "source.hashed_options"),
        user_schema=None if source.get("user_schema") is None else _text(source["user_schema"], "source.user_schema"),
        delta_version=None if delta_version is None else _long(delta_version, "source.delta_version"),
        schema=_text_map(source, "schema", "source.schema"),
        partition_columns=_texts(source, "partition_columns", "source.partition_columns"),
        read_facts=_text_map(source, "read_facts", "source.read_facts"),
        data_parts=parts,
        dropped_file_ids=frozenset(_longs(root, "dropped_file_ids", "dropped_file_ids", MAX_FILE_ID)),
        num_files=num_files,
        substring_columns=substring_columns,
        ngram_sizes=ngram_sizes,
        substring_case_insensitive=_boolean(config, "substring_case_insensitive"),
    )
    return state, version


def _read_entry(fs: pafs.FileSystem, path: str, size: Optional[int]) -> str:
    if size is not None and size > MAX_ENTRY_BYTES:
        raise UnusableIndex(f"log entry {path} is larger than {MAX_ENTRY_BYTES} bytes, the most an entry may be")
    with fs.open_input_stream(path) as stream:
        data = stream.read(MAX_ENTRY_BYTES + 1)
    if len(data) > MAX_ENTRY_BYTES:
        raise UnusableIndex(f"log entry {path} is larger than {MAX_ENTRY_BYTES} bytes, the most an entry may be")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UnusableIndex(f"log entry {path} is not UTF-8") from None


def _entries(fs: pafs.FileSystem, log_dir: str) -> list:
    """The log's entries, newest first: (id, file info)."""
    infos = fs.get_file_info(pafs.FileSelector(log_dir, allow_not_found=False))
    entries = []
    for info in infos:
        match = _ENTRY_NAME.match(info.base_name)
        if info.type == pafs.FileType.File and match and int(match.group(1)) <= MAX_LONG:
            entries.append((int(match.group(1)), info))
    entries.sort(key=lambda e: -e[0])
    return entries


def last_source(fs: pafs.FileSystem, index_path: str) -> Optional[tuple[str, str]]:
    """(format, root path) of the table the newest readable entry in any state names, for an index that cannot
    be used (its latest stable entry unreadable, a state other than ACTIVE): the reader still lists that table
    and reads all of it. None when no entry names one Parquet or Delta table (or there is no log)."""
    try:
        entries = _entries(fs, index_path.rstrip("/") + "/" + LOG_DIR)
    except OSError:
        return None
    for _, info in entries:
        try:
            root = json.loads(_read_entry(fs, info.path, info.size))
            source = _obj(_obj(root, "the entry").get("source"), "source")
            fmt, roots = _text(source.get("format"), "source.format"), _texts(source, "root_paths", "source.root_paths")
        except (UnusableIndex, OSError, ValueError):
            continue
        if fmt in ("parquet", "delta") and len(roots) == 1 and roots[0]:
            return fmt, roots[0]
    return None


def latest_active(fs: pafs.FileSystem, index_path: str) -> Version:
    """The version the latest stable entry describes, if ACTIVE; UnusableIndex (naming why) otherwise."""
    log_dir = index_path.rstrip("/") + "/" + LOG_DIR
    try:
        entries = _entries(fs, log_dir)
    except OSError as exc:
        raise UnusableIndex(f"there is no index log at {log_dir} ({exc})") from None
    for position, (entry_id, info) in enumerate(entries):
        try:
            state, version = parse(_read_entry(fs, info.path, info.size))
        except (UnusableIndex, OSError) as exc:
            if position == 0:
                continue  # the newest entry may still be being written
            raise UnusableIndex(f"log entry {info.base_name} cannot be read: {exc}") from None
        if state in STABLE:
            if state != "ACTIVE":
                raise UnusableIndex(f"the index is {state} (log entry {entry_id})")
            return version
    raise UnusableIndex(f"the index log at {log_dir} holds no stable entry")
