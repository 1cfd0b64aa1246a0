"""An hsbloom index opened without Spark: which source files may hold rows for a predicate, and why.

    index = hsbloom.readers.open_index("/lake/_hsbloom/events_idx")     # once per process
    pruned = index.prune(eq("user_id", 42))                             # per query: lists the source now
    pruned.files          # the files to read (every file the index cannot rule out)
    print(pruned.explain())

Never a wrong answer: a file the index does not hold with the same size and modification time, a column the
index does not cover or cannot probe, a literal that is not exactly the column's type, damaged bytes, or read
facts this reader cannot honour all keep files, each with its reason. A substring condition (contains,
startswith, endswith, LIKE) is answered only by its column's substring filter, as the jar's `SubstringCondition`.
"""

from __future__ import annotations

import re
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs

from hsbloom.errors import InvalidArgumentError
from hsbloom.readers import literals, log, sources, tables, zones
from hsbloom.readers.held import ColumnEntries, Held
from hsbloom.readers.predicates import SUBSTRING, And, Eq, ILike, In, IsNull, Like, Or, Predicate, check
from hsbloom.readers.substring import like_runs, literal_runs, probed_grams
from hsbloom.readers.storage import resolve

# What a predicate says about one file: it may match (keep), it cannot (skip).
_KEEP, _SKIP = True, False
# The key of a substring condition's column in the usable columns (value columns are keyed by their name).
SUBSTRING_FILTER = "substring filter"
# ... and of an ILIKE condition's column: its filter of lower-cased values.
LOWER_SUBSTRING_FILTER = "substring filter of lower-cased values"
# The listings an index keeps (per root and Delta version): the last few, for listing_ttl and the schema.
_LISTINGS_KEPT = 8


@dataclass
class Pruned:
    """The answer for one predicate: the files to read, the files skipped, and why."""

    predicate: str
    files: list
    skipped: list
    total: int
    reasons: list = field(default_factory=list)
    # How to read the files: the table's root (hive partitions are relative to it) and the filesystem they are in.
    root: Optional[str] = None
    filesystem: Optional[pafs.FileSystem] = None
    # The table's schema as listed (for a reader given no file).
    schema: Any = None
    # A Delta snapshot whose files have deletion vectors: plain Parquet readers would return deleted rows.
    deletion_vectors: bool = False
    # Kept files of which only some row groups may match (zones): path -> those row groups, in file order. A
    # kept file not named here is read whole.
    row_groups: dict = field(default_factory=dict)

    def explain(self) -> str:
        lines = [f"hsbloom: {self.predicate}: read {len(self.files)} of {self.total} files"]
        lines += [f"  {r}" for r in self.reasons]
        return "\n".join(lines)


class UnusableIndexWarning(UserWarning):
    """The index is not used for this query (the warning says why): every file is read."""


class Index:
    """The latest ACTIVE version of an index, its file tables loaded and checked once; probed per query."""

    def __init__(self, path: str, filesystem: Any = None, source_filesystem: Any = None,
                 storage_options: Optional[dict] = None, listing_ttl: Optional[float] = None,
                 root: Optional[str] = None):
        if listing_ttl is not None and (isinstance(listing_ttl, bool) or not isinstance(listing_ttl, (int, float))
                                        or not 0 <= listing_ttl < float("inf")):
            raise InvalidArgumentError(f"listing_ttl must be a number of seconds >= 0, or None to list the table "
                                       f"at every query; got {listing_ttl!r}")
        if root is not None and (not isinstance(root, str) or not root):
            raise InvalidArgumentError(f"root must be the table's path (a non-empty string), got {root!r}")
        self.path = path
        self._root = root
        self._listing_ttl = listing_ttl or 0
        # (root, delta version) -> (when it was listed, the listing): the last listings, reused within listing_ttl,
        # and otherwise the previous listing a Parquet listing takes its schema from while that file is unchanged.
        self._listings: dict = {}
        self._fs, self._index_path = resolve(path, filesystem)
        self._source_filesystem = source_filesystem
        self._storage_options = storage_options
        self.name = self._index_path.rstrip("/").rsplit("/", 1)[-1]
        self.damage: list = []
        self.unusable: Optional[str] = None
        self.version: Optional[log.Version] = None
        self._held = Held.empty()
        self._zones = zones.Zones.empty()
        try:
            self.version = log.latest_active(self._fs, self._index_path)
            if self.version.format not in ("parquet", "delta"):
                raise log.UnusableIndex(f"it indexes a {self.version.format} source; this reader reads Parquet and Delta")
            if len(self.version.root_paths) != 1:
                raise log.UnusableIndex("it indexes several root paths; this reader reads one table")
            self._held = tables.load(self._fs, self._index_path, self.name, self.version.data_parts,
                                     self.version.dropped_file_ids, self.damage)
            self._zones = zones.load(self._fs, self._index_path, self.name, self.version.data_parts,
                                     self.version.dropped_file_ids, self.damage, self._held)
        except (log.UnusableIndex, tables.OlderLayout, OSError) as exc:
            self.unusable = str(exc)
        # (format, root) of the one Parquet or Delta table the index covers, as its log says: the version's, or,
        # when no version can be read, the newest readable entry's in any state. An unusable index still answers
        # with every file of that table (or of the root= given); with neither, no query could be answered.
        self._covers: Optional[tuple] = None
        if self.version is None:
            self._covers = log.last_source(self._fs, self._index_path)
        elif self.version.format in ("parquet", "delta") and len(self.version.root_paths) == 1:
            self._covers = (self.version.format, self.version.root_paths[0])
        if self.unusable is not None:
            if self._covers is None and root is None:
                raise InvalidArgumentError(
                    f"hsbloom index {path} cannot be used ({self.unusable}) and its log names no one Parquet or "
                    "Delta table to read whole: pass root= (the table's path) to open_index; every query then "
                    "reads every file"
                )
            warnings.warn(f"hsbloom index {path} is not used, every file is read: {self.unusable}",
                          UnusableIndexWarning, stacklevel=3)
        # The columns the plaintext file tables hold rows of: an index of an encrypted source keeps its encrypted
        # columns' rows in sealed/ tables, encrypted with the columns' keys, which this reader does not decrypt.
        self._plaintext_columns = {name for name, rows in self._held.columns.items() if rows.present.any()}
        self._blocks = tables.Blocks(self._fs, self.damage)
        # (files or zones, column) -> [(group, its entries, their member positions)], built at its first probe
        self._members: dict = {}

    @property
    def source(self) -> Optional[str]:
        """The table the index covers (its root path as its log records it), None when no log entry names one."""
        return self._covers[1] if self._covers else None

    def _format(self, root: str) -> str:
        """parquet or delta: as the log says, else (a log that cannot say) as the table is."""
        if self._covers is not None:
            return self._covers[0]
        return "delta" if sources.is_delta(root, self._source_filesystem) else "parquet"

    def list_source(self, root: Optional[str] = None, delta_version: Optional[int] = None) -> sources.Listing:
        """The source's files now (or the Delta snapshot `delta_version`; within listing_ttl, the last listing)."""
        return self._listing(root, delta_version)[1]

    def _listing(self, root: Optional[str], delta_version: Optional[int]) -> tuple:
        """(seconds since it was listed when reused within listing_ttl, else None; the listing)."""
        root = root or self._root or self.source
        cache_key = (root, delta_version)
        now = time.monotonic()
        cached = self._listings.get(cache_key)
        if cached is not None and now - cached[0] < self._listing_ttl:
            return now - cached[0], cached[1]
        if self._format(root) == "delta":
            listing = sources.list_delta(root, delta_version, self._storage_options)
        else:
            listing = sources.list_parquet(root, self._source_filesystem, cached[1] if cached else None)
        self._listings.pop(cache_key, None)
        self._listings[cache_key] = (now, listing)
        while len(self._listings) > _LISTINGS_KEPT:
            self._listings.pop(next(iter(self._listings)))
        return None, listing

    def prune(self, predicate: Predicate, listing: Optional[sources.Listing] = None, root: Optional[str] = None,
              delta_version: Optional[int] = None) -> Pruned:
        """The files of the source (listed now, or `listing`) that may hold rows for `predicate`."""
        check(predicate)
        age = None
        if listing is None:
            age, listing = self._listing(root, delta_version)
        files = listing.files
        text = str(predicate)
        how = dict(root=root or self._root or self.source, filesystem=listing.filesystem, schema=listing.schema,
                   deletion_vectors=listing.deletion_vectors)
        if self.unusable is not None:
            warnings.warn(f"hsbloom index {self.path} is not used, every file is read: {self.unusable}",
                          UnusableIndexWarning, stacklevel=2)
            return Pruned(text, [f.path for f in files], [], len(files), [f"index not used: {self.unusable}"], **how)
        why = sources.facts_difference(self.version, listing, self.version.format, listing.column_mapping)
        if why is not None:
            warnings.warn(f"hsbloom index {self.path} is not used, every file is read: {why}", UnusableIndexWarning,
                          stacklevel=2)
            return Pruned(text, [f.path for f in files], [], len(files), [f"index not used: {why}"], **how)
        reasons: list = []
        if age is not None:
            reasons.append(f"the table's listing of {age:.1f} s ago is reused (listing_ttl={self._listing_ttl} s): "
                           "files added, changed or deleted since are not seen")
        usable = self._usable_columns(predicate, listing, reasons)
        self._unanswered_substrings(predicate, usable, reasons)
        # Each listed file's number in the index (-1: not held, or held with another size or mtime: read).
        number = np.fromiter((self._held.number.get(f.key, -1) if f.key is not None else -1 for f in files),
                             dtype=np.int64, count=len(files))
        held = number >= 0
        held[held] &= ((self._held.sizes[number[held]] == [f.size for f, h in zip(files, held) if h])
                       & (self._held.mtimes[number[held]] == [f.mtime for f, h in zip(files, held) if h]))
        may_match = self._compile(predicate, usable)()
        keep = ~held
        keep[held] = may_match[number[held]]
        row_groups = self._row_groups(predicate, usable, files, number, held & keep, keep, reasons)
        kept = [f.path for f, k in zip(files, keep) if k]
        skipped = [f.path for f, k in zip(files, keep) if not k]
        not_held = int(np.count_nonzero(~held))
        if not_held:
            reasons.append(f"{not_held} files are new or changed since the index was built (or not covered): read")
        reasons.append(f"{len(skipped)} files skipped: their filters, zones or null counts rule the predicate out")
        if self.damage:
            reasons.append(f"damage found ({len(self.damage)}): the files it covers are read")
        return Pruned(text, kept, skipped, len(files), reasons, row_groups=row_groups, **how)

    def _row_groups(self, predicate: Predicate, usable: dict, files: list, number: np.ndarray, probed: np.ndarray,
                    keep: np.ndarray, reasons: list) -> dict:
        """The zone step (`PrunedFileIndex`'s): of each kept, held file with whole zones, the row groups whose
        zones may match; a file none of whose zones may match is no longer kept (`keep` is updated)."""
        if not len(self._zones) or not usable:
            return {}
        zone_may = self._compile(predicate, usable, self._zones)()
        n = len(self._held)
        zones_per_file = np.bincount(self._zones.file, minlength=n)
        may_per_file = np.bincount(self._zones.file[zone_may], minlength=n)
        # The zones that may match, grouped by file: file f's are may_zones[first[f]:first[f] + may_per_file[f]].
        may_zones = np.flatnonzero(zone_may)
        may_zones = may_zones[np.argsort(self._zones.file[may_zones], kind="stable")]
        first = np.concatenate([[0], np.cumsum(may_per_file)[:-1]])
        row_groups, before, after = {}, 0, 0
        for i in np.flatnonzero(probed):
            f = number[i]
            if not zones_per_file[f]:
                continue
            before += int(zones_per_file[f])
            after += int(may_per_file[f])
            if may_per_file[f] == 0:
                keep[i] = False
            elif may_per_file[f] < zones_per_file[f]:
                mine = may_zones[first[f]:first[f] + may_per_file[f]]
                row_groups[files[i].path] = sorted(self._zones.row_group[mine].tolist())
        if before:
            reasons.append(f"row groups of kept files with zones: {before} -> {after} ({len(row_groups)} files read "
                           "in part: " + ", ".join(f"{p.rsplit('/', 1)[-1]} {len(g)}" for p, g in
                                                   sorted(row_groups.items())[:5])
                           + (", ..." if len(row_groups) > 5 else "") + ")")
        return row_groups

    def candidates(self, predicate: Predicate) -> list:
        """The files the index holds (as it records them) whose filters and counts may match `predicate`, without
        listing the source: the index's own answer, for tests and services that list the table themselves."""
        check(predicate)
        if self.unusable is not None:
            raise InvalidArgumentError(f"the index is not usable: {self.unusable}")
        values, substrings = _columns(predicate)
        usable = {c: self.version.schema.get(c, "") for c in values if c in self.version.indexed_columns
                  and literals.is_hashable_type(self.version.schema.get(c, ""))}
        usable.update({(_filter_kind(lower), c): self.version.gram_key(c, lower) for c, lower in substrings
                       if self.version.gram_key(c, lower) is not None and self.version.schema.get(c) == "string"})
        may_match = self._compile(predicate, usable)()
        return sorted(self._held.path_array.filter(pa.array(may_match)).to_pylist())

    def _usable_columns(self, predicate: Predicate, listing: sources.Listing, reasons: list) -> dict:
        """{column: recorded type} of the predicate's columns the index can probe, and {(SUBSTRING_FILTER,
        column): the key of its substring filter's rows} of those its substring conditions can probe; a reason
        for each other."""
        values, substrings = _columns(predicate)
        usable = self._usable_substring_columns(substrings, listing, reasons)
        for column in sorted(values):
            if column not in self.version.indexed_columns:
                also = (" (it has a substring filter, for contains, startswith, endswith and like only)"
                        if column in self.version.substring_columns else "")
                reasons.append(f"{column} is not indexed{also}: its conditions keep every file")
                continue
            why = self._unreadable(column, column, listing)
            spark_type = self.version.schema.get(column, "")
            if why is None and not literals.is_hashable_type(spark_type):
                why = f"column {column} has type {spark_type}, which is not hashed"
            if why is not None:
                reasons.append(f"{why}: its conditions keep every file")
                continue
            usable[column] = spark_type
        return usable

    def _unreadable(self, column: str, key: str, listing: sources.Listing) -> Optional[str]:
        """Why the filter rows of `key` (`column`'s values or grams) cannot answer for the listing: the column is
        read otherwise than indexed, or its rows are sealed (encrypted) in the index; None when they can."""
        why = sources.column_difference(self.version, listing, column)
        if why is None and self._held and key not in self._plaintext_columns:
            why = (f"column {column} is encrypted in the index (its sealed/ rows, under the column's key), "
                   "which this reader does not decrypt")
        return why

    def _unanswered_substrings(self, p: Predicate, usable: dict, reasons: list) -> None:
        """A reason for each substring condition on a usable column that gives no gram to probe."""
        if isinstance(p, (And, Or)):
            for c in p.children:
                self._unanswered_substrings(c, usable, reasons)
        elif isinstance(p, ILike) and (LOWER_SUBSTRING_FILTER, p.column) in usable and not p.pattern.isascii():
            reasons.append(f"{p}: a pattern with a character outside ASCII, whose lower case is Spark's to choose "
                           "(the session's locale, ICU): keeps every file")
        elif isinstance(p, SUBSTRING) and (_filter_kind(isinstance(p, ILike)), p.column) in usable:
            n = self.version.ngram_sizes[p.column]
            grams = _probed_grams(p, n)
            if grams is None:
                reasons.append(f"{p}: Spark refuses the pattern (its escape character before another character) "
                               "or it has no UTF-8 form: keeps every file")
            elif not grams:
                reasons.append(f"{p}: no literal run of {n} bytes to look for: keeps every file")

    def _usable_substring_columns(self, columns: set, listing: sources.Listing, reasons: list) -> dict:
        """{(SUBSTRING_FILTER, column): its filter's key} of the `columns` ((column, of lower-cased values: ILIKE))
        of substring conditions whose substring filter can be probed (as the jar's `IndexCatalog.coverage`: a
        string column read as indexed), keyed (LOWER_SUBSTRING_FILTER, column) for the lower-cased values; a
        reason for each other."""
        usable = {}
        for column, lower in sorted(columns):
            key = self.version.gram_key(column, lower)
            if key is None and lower:
                reasons.append(f"{column} has no substring filter of lower-cased values (substring_case_insensitive): "
                               "its ilike conditions keep every file")
                continue
            if key is None:
                reasons.append(f"{column} has no substring filter: its contains, startswith, endswith and like "
                               "conditions keep every file")
                continue
            why = self._unreadable(column, key, listing)
            spark_type = self.version.schema.get(column, "")
            if why is None and spark_type != "string":
                why = f"column {column} has type {spark_type}, not string"
            if why is not None:
                reasons.append(f"{why}: its substring conditions keep every file")
                continue
            usable[(_filter_kind(lower), column)] = key
        return usable

    def _compile(self, p: Predicate, usable: dict, target: Any = None):
        """`p` as a function giving, for every held file (or every zone: `target` the `Zones`) at once, whether it
        may match (a boolean array); its literals are hashed once per query, not once per file."""
        target = self._held if target is None else target
        n = len(target)
        if isinstance(p, (And, Or)):
            tests = [self._compile(c, usable, target) for c in p.children]
            combine = np.logical_and if isinstance(p, And) else np.logical_or
            return lambda: combine.reduce([t() for t in tests])
        if isinstance(p, SUBSTRING):
            return self._compile_substring(p, usable, target)
        column = p.column
        entries = target.columns.get(column)
        if column not in usable or entries is None:
            return lambda: np.full(n, _KEEP)
        if isinstance(p, IsNull):
            return lambda: ~entries.present | (entries.num_nulls > 0)
        hashes: list = []
        for v in (p.value,) if isinstance(p, Eq) else p.values:
            h = literals.hashes_for(v, usable[column])
            if h is None:
                return lambda: np.full(n, _KEEP)
            hashes += h
        if not hashes:
            return lambda: np.full(n, _SKIP)  # only NULLs: `= NULL` matches no row

        def probe() -> np.ndarray:
            # No row: kept; no non-null value: skipped; no filter: kept; else what the filter says.
            unknown = ~entries.present | (entries.group < 0)
            if target is self._zones:
                in_file, may = self._zones_may_hold(column, entries, hashes)
                may |= unknown & in_file
            else:
                may = unknown | self._filters_may_hold(column, entries, hashes, target)
            may &= ~(entries.present & (entries.num_rows == entries.num_nulls))
            return may

        return probe

    def _compile_substring(self, p: Predicate, usable: dict, target: Any):
        """A substring condition (`SubstringCondition`'s `AllGrams`): a file may match unless one of the probed
        grams of the condition's literal runs is surely absent from its substring filter; no row or no filter:
        kept. A zone may match when its file may (`narrowedTo`) and its own substring filter may hold every probed
        gram (a zone without one: kept)."""
        n = len(target)
        key = usable.get((_filter_kind(isinstance(p, ILike)), p.column))
        entries = self._held.columns.get(key) if key is not None else None
        grams = _probed_grams(p, self.version.ngram_sizes[p.column]) if entries is not None else None
        if not grams:
            return lambda: np.full(n, _KEEP)

        def may_hold_all(column_entries: ColumnEntries, of: Any) -> np.ndarray:
            """Per file (or zone) of `of`: no row or no filter (unknown: kept), or every probed gram may be there."""
            found = ~column_entries.present | (column_entries.group < 0)
            every = np.ones(len(of), dtype=bool)
            for h in grams:
                every &= self._filters_may_hold(key, column_entries, [h], of)
            return found | every

        def probe() -> np.ndarray:
            may = may_hold_all(entries, self._held)
            if target is not self._zones:
                return may
            in_file = may[self._zones.file]
            zone_entries = self._zones.columns.get(key)
            return in_file if zone_entries is None else in_file & may_hold_all(zone_entries, self._zones)

        return probe

    def _zones_may_hold(self, column: str, entries: ColumnEntries, hashes: list) -> tuple:
        """Per zone: whether its file's own `column` filter may hold one of `hashes`, and whether the zone's filter
        may hold one of those its file may hold. A value in a row group is in its file, so a zone is probed only
        with the values its file may hold (the jar's `narrowedTo`, zones.md): an IN of n values then has the false
        positives of those few, not of all n, and the reader keeps the row groups (and files) the jar keeps."""
        files = self._held.columns.get(column)
        in_file = np.zeros(len(self._zones), dtype=bool)
        found = np.zeros(len(self._zones), dtype=bool)
        for h in hashes:
            if files is None:
                file_may = np.ones(len(self._held), dtype=bool)
            else:
                file_may = ~files.present | (files.group < 0) | self._filters_may_hold(column, files, [h], self._held)
            zone_file_may = file_may[self._zones.file]
            in_file |= zone_file_may
            found |= zone_file_may & self._filters_may_hold(column, entries, [h], self._zones)
        return in_file, found

    def _filters_may_hold(self, column: str, entries: ColumnEntries, hashes: list, target: Any) -> np.ndarray:
        """Per held file (or zone), whether its `column` filter may hold one of `hashes`: each group's stripe is
        probed for all its members at once (one numpy step per group and hash, not a Python call per file)."""
        members = self._members.get((target is self._zones, column))
        if members is None:
            order = np.argsort(entries.group, kind="stable")
            bounds = np.searchsorted(entries.group[order], np.arange(len(entries.groups) + 1))
            members = self._members[(target is self._zones, column)] = [
                (g, order[bounds[i]:bounds[i + 1]], entries.position[order[bounds[i]:bounds[i + 1]]])
                for i, g in enumerate(entries.groups)]
        found = np.zeros(len(target), dtype=bool)
        for group, files, positions in members:
            hit = np.zeros(len(files), dtype=bool)
            for h in hashes:
                hit |= self._blocks.members_containing(group, positions, h)
            found[files] = hit
        return found


def _columns(p: Predicate) -> tuple:
    """(the columns of the predicate's equality and null conditions, (column, lower-cased: ILIKE) of its substring
    conditions)."""
    if isinstance(p, (And, Or)):
        parts = [_columns(c) for c in p.children]
        return set().union(*(v for v, _ in parts)), set().union(*(s for _, s in parts))
    return (set(), {(p.column, isinstance(p, ILike))}) if isinstance(p, SUBSTRING) else ({p.column}, set())


def _filter_kind(lower: bool) -> str:
    """The usable columns' key kind of a substring condition's filter: of the values, or of their lower case."""
    return LOWER_SUBSTRING_FILTER if lower else SUBSTRING_FILTER


def _probed_grams(p: Predicate, n: int) -> Optional[list]:
    """The gram hashes the jar probes for the substring condition `p`, of the literal runs a value must hold (a
    bytes literal as its bytes), at most 16 spread over them; none when no run has n bytes, None where Spark
    refuses the pattern or a run has no UTF-8 form (either way every file is kept). Spark's optimizer makes
    `LIKE 'pre%suf'` (no `_`, no escape character) `startswith AND endswith`, whose checks the jar probes apart,
    at most 16 grams each: so do these."""
    if isinstance(p, ILike):
        # Spark's ILIKE is LIKE of lower(column) and lower(pattern), the pattern lowered before it is read (so an
        # upper-case escape character is no longer one). Only an ASCII pattern's lower case is certain here.
        if not p.pattern.isascii():
            return []
        p = Like(p.column, p.pattern.lower(), p.escape)
    if isinstance(p, Like):
        both = _PREFIX_SUFFIX.fullmatch(p.pattern) if p.escape not in p.pattern else None
        if both is not None:
            parts = [literal_runs(both[1]), literal_runs(both[2])]
            return None if None in parts else [h for runs in parts for h in probed_grams(
                [r.encode("utf-8") for r in runs], n)]
        runs = like_runs(p.pattern, p.escape)
    elif isinstance(p.literal, bytes):
        return probed_grams([p.literal], n)
    else:
        runs = literal_runs(p.literal)
    return None if runs is None else probed_grams([r.encode("utf-8") for r in runs], n)


# `LikeSimplification`'s startsAndEndsWith: a prefix and a suffix without wildcards around one `%`.
_PREFIX_SUFFIX = re.compile(r"([^_%]+)%([^_%]+)", re.DOTALL)


def open_index(path: str, filesystem: Any = None, source_filesystem: Any = None,
               storage_options: Optional[dict] = None, listing_ttl: Optional[float] = None,
               root: Optional[str] = None) -> Index:
    """Opens the index at `path` (its directory under the system path: `<system path>/<index name>`).

    `filesystem`/`source_filesystem`: pyarrow or fsspec filesystems for the index and the table (default: from
    the paths' URIs); `storage_options`: for deltalake. A damaged or unusable index warns and keeps every file.
    `root`: the table's path, to read a copy of the table elsewhere, or for an index whose log cannot be read
    and names no table (open_index then refuses without it).
    `listing_ttl` (seconds, default None: off): a query within that long of the table's last listing reuses it,
    so files added, changed or deleted in that window are not seen (docs/readers.md, "Listing once per
    interval"): for a service that accepts answers that many seconds stale.
    """
    return Index(path, filesystem, source_filesystem, storage_options, listing_ttl, root)
