"""The zone table of an index built with granularity="row_group": a filter per (file, row group, column), so a
reader reads only the row groups that may match (docs/design/zones.md).

The jar's `ZoneTable.load` is the specification: each row is a file-table row (checked as `tables.load` checks
one) plus `row_group`, `row_groups`, `zone_start`, `zone_length` and `zone_checksum`, chained to the row
checksum (docs/design/format.md). A file's zones are used only when they are whole: every row group once per
column, rows that pass their checks, the file's size and mtime as the file table holds them, and row counts that
add up to the file's. A file with any doubt has no zones here, and is read whole.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from hsbloom.readers import tables
from hsbloom.readers.held import Held, column_entries, file_keys
from hsbloom.readers.xxh64 import xxh64_u64

COLUMNS = tables.COLUMNS + (
    ("row_group", pa.int32()),
    ("row_groups", pa.int32()),
    ("zone_start", pa.int64()),
    ("zone_length", pa.int64()),
    ("zone_checksum", pa.int64()),
)


@dataclass
class Zones:
    """Whole zones, as columns aligned by zone number: zone z is row group `row_group[z]` of held file `file[z]`;
    `columns` maps an indexed column to its `ColumnEntries` over zones (the same shape as `Held.columns`)."""

    file: np.ndarray
    row_group: np.ndarray
    columns: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.file)

    @staticmethod
    def empty() -> "Zones":
        return Zones(np.zeros(0, np.int64), np.zeros(0, np.int64))


def zone_checksums(rows: pa.Table, seed: int) -> np.ndarray:
    """`ZoneTable.checksum` of every row (uint64): hashLong(length, hashLong(start, hashLong((row_group << 32) |
    row_groups, hashLong(row_checksum, seed)))), each step a seeded XXH64 of 8 bytes with one seed per row."""
    def column(name: str) -> np.ndarray:
        return rows.column(name).fill_null(0).to_numpy().astype(np.int64)

    h = xxh64_u64(column("row_checksum"), np.full(rows.num_rows, seed, dtype=np.uint64))
    place = (column("row_group") << 32) | column("row_groups")  # as the jar: Int widened to Long (sign-extended)
    for values in (place, column("zone_start"), column("zone_length")):
        h = xxh64_u64(values, h)
    return h


def load(fs: pafs.FileSystem, index_path: str, index_name: str, data_parts: tuple, dropped: frozenset,
         damage: list, held: Held) -> Zones:
    """The whole zones of the version's data directories for the files `held` holds (a directory without
    `zones/` has none)."""
    intact, failed, directories = [], set(), {}
    for version in data_parts:
        directory = directories[version] = f"{index_path.rstrip('/')}/v__={version}"
        table = f"{directory}/zones"
        if fs.get_file_info(table).type != pafs.FileType.Directory:
            continue
        seed = tables.name_seed(f"{index_name}/v__={version}")
        for part in tables.part_paths(fs, table):
            try:
                pf = pq.ParquetFile(fs.open_input_file(part))
                schema = pf.schema_arrow
                for name, kind in COLUMNS:
                    if name not in schema.names or schema.field(name).type != kind:
                        raise ValueError(f"no column '{name}' of type {kind}")
                rows = pf.read(columns=[c for c, _ in COLUMNS])
                ok = tables.intact_rows(rows, seed) & (
                    zone_checksums(rows, seed) == rows.column("zone_checksum").fill_null(0).to_numpy().view(np.uint64))
            except (OSError, ValueError, pa.ArrowException) as exc:
                tables.record_damage(damage, f"{part}: the zone table part cannot be read ({exc}): its files are "
                                             "read whole")
                continue
            keys = file_keys(rows.column("file_path").fill_null("").combine_chunks())
            if not ok.all():
                tables.record_damage(damage, f"{part}: {int(np.count_nonzero(~ok))} rows of the zone table fail "
                                             "their checks: their files are read whole")
                failed.update(k for k, good in zip(keys.to_pylist(), ok) if not good)
            ok &= ~np.isin(rows.column("file_id").to_numpy(), np.array(sorted(dropped), dtype=np.int64))
            rows = rows.append_column("key", keys).append_column("data_version", tables._repeat(version, rows.num_rows))
            intact.append(rows.filter(pa.array(ok & keys.is_valid().to_numpy(zero_copy_only=False))))
    if not intact:
        return Zones.empty()
    return _whole(pa.concat_tables(intact, promote_options="permissive"), failed, held, directories)


def _whole(rows: pa.Table, failed: set, held: Held, directories: dict) -> Zones:
    """The zones of files whose rows describe every row group once per column, with the held file's size and
    mtime, and row counts adding up to the file's (`ZoneTable.whole`)."""
    keys = rows.column("key").to_pylist()
    size, mtime, groups, group, start, length, num_rows = (
        rows.column(c).to_numpy() for c in ("file_size", "file_mtime", "row_groups", "row_group", "zone_start",
                                            "zone_length", "num_rows"))
    names = rows.column("column").to_pylist()
    file_rows = _file_rows(held)
    by_key: dict = {}
    for i, k in enumerate(keys):
        by_key.setdefault(k, []).append(i)
    chosen, zone_of_row = [], np.full(rows.num_rows, -1, dtype=np.int64)
    zone_file, zone_group = [], []
    for k, at in by_key.items():
        f = held.number.get(k, -1)
        if k in failed or f < 0:
            continue
        at = np.array(at)
        n = int(groups[at[0]])
        if (n <= 0 or np.any(groups[at] != n) or np.any(size[at] != held.sizes[f])
                or np.any(mtime[at] != held.mtimes[f])):
            continue
        columns = {names[i] for i in at}
        per_group: dict = {}
        for i in at:
            per_group.setdefault(int(group[i]), []).append(i)
        if set(per_group) != set(range(n)) or not all(
                len(rs) == len(columns) and {names[i] for i in rs} == columns
                and len({(start[i], length[i], num_rows[i]) for i in rs}) == 1 for rs in per_group.values()):
            continue
        if sum(int(num_rows[rs[0]]) for rs in per_group.values()) != file_rows[f]:
            continue
        for g in range(n):
            zone_of_row[per_group[g]] = len(zone_file)
            zone_file.append(f)
            zone_group.append(g)
        chosen.append(at)
    zones = Zones(np.array(zone_file, dtype=np.int64), np.array(zone_group, dtype=np.int64))
    if not chosen:
        return zones
    which = np.concatenate(chosen)
    for name in sorted({names[i] for i in which}):
        mine = which[[names[i] == name for i in which]]
        zones.columns[name] = column_entries(rows.take(mine), zone_of_row[mine], len(zones), directories)
    return zones


def _file_rows(held: Held) -> np.ndarray:
    """Each held file's row count from its file-table rows (-1 when it has none)."""
    out = np.full(len(held), -1, dtype=np.int64)
    for entries in held.columns.values():
        out = np.where((out < 0) & entries.present, entries.num_rows, out)
    return out
