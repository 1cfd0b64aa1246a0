"""Where an index's log and data live.

    <system path>/<index name>/_hsbloom_log/00000000000000000000.json   operation log
    <system path>/<index name>/v__=<N>/files/                          file-level index table
    <system path>/<index name>/v__=<N>/global/                         global filters
    <system path>/<index name>/v__=<N>/blocks/                         the file filters, block-major
    <system path>/<index name>/v__=<N>/zones/                          row-group filters (granularity "row_group")

The system path is resolved by the jar (`Layout.systemPath`: the setting, else a
directory under the warehouse; docs/configuration.md), whose leading underscore
makes Spark's file listing skip it, so it can never be mistaken for a table's data. Every build writes a
new version directory `v__=N`, so the partial data of a crashed build is never
read or reused; an index version may read several of them (`LogEntry.parts`,
after incremental refreshes: docs/refresh.md); vacuum removes the directories
the latest ACTIVE entry does not read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from hsbloom import jar, settings
from hsbloom.config import validate_index_name
from hsbloom.index import stored

SYSTEM_PATH_CONF = settings.SYSTEM_PATH
# The names below are the jar's (hsbloom.index.Layout, which queries read with); Python writes the log and the
# directories with them, and tests/test_layout.py checks that both sides spell them alike.
LOG_DIR = "_hsbloom_log"
VERSION_PREFIX = "v__="
FILES_TABLE = "files"
GLOBAL_TABLE = "global"
ZONES_TABLE = "zones"  # optional: only indexes with granularity "row_group" write it (docs/design/zones.md)
_VERSION_DIR = re.compile(r"v__=(0|[1-9][0-9]{0,9})")  # the jar's Layout.versionOf: no sign, no leading zero
# How a data directory is stored, recorded in log entries as `data_layout` (absent: written before it was
# recorded). 2: file tables with the block-addressable side files (`blocks/`) planning reads; 3: the same with
# checksums (docs/design/integrity.md); 4: each filter stored once, in `blocks/`, and the file tables list the
# version's source files (the log entry does not). A full refresh rebuilds data of another layout; queries and an
# incremental refresh do not use it (they ask for a full refresh).
DATA_LAYOUT = 4


def system_path(spark: Any) -> str:
    """The directory holding all indexes of this session (not qualified): the jar's `Layout.systemPath`, so the
    default and its normalization are defined once, where queries resolve it too."""
    return str(jar.jar_class(spark, "layout").systemPath(jar.java_session(spark)))


@dataclass(frozen=True)
class IndexLayout:
    """The paths of one index under a (qualified) system path."""

    system_path: str
    name: str

    def __post_init__(self) -> None:
        validate_index_name(self.name)

    @property
    def index_path(self) -> str:
        return f"{self.system_path.rstrip('/')}/{self.name}"

    @property
    def log_path(self) -> str:
        return f"{self.index_path}/{LOG_DIR}"

    def data_path(self, version: int) -> str:
        """The data directory of index version `version`: a direct child of the index directory, whatever
        `version` holds (a value that is not a version in range raises ValueError, never becomes a path)."""
        return f"{self.index_path}/{VERSION_PREFIX}{stored.data_version(version, 'a data version')}"


def data_version_of(directory_name: str) -> int | None:
    """N for a directory named 'v__=N', else None."""
    match = _VERSION_DIR.fullmatch(directory_name)
    return int(match.group(1)) if match and int(match.group(1)) <= stored.MAX_DATA_VERSION else None
