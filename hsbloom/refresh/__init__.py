"""Refreshing an index: following a source that changed, cheaply and without a wrong answer in between.

Three modes (docs/refresh.md):

- full: build every current file into a new data version, as create does;
- incremental: build only the appended (or changed) files into a new data
  directory, and make the new version read it together with the previous
  version's directories, minus the deleted files' ids; the global filters are
  the OR of the directories' (built at one size, so deleted values stay in them
  until a full refresh). Past `MAX_DATA_PARTS` directories it compacts instead:
  the kept rows are copied into one new directory;
- quick: compare the source and record what changed in the log
  (`PendingChanges`), writing no data. Queries read files the data does not
  hold and never list deleted ones (hybrid scan), so they stay correct.

What changed is found by file fingerprint (path, size, modification time):
for Delta from the add and remove actions of the commits since the version the
data covers (the jar's `IndexRefresh.deltaChanges`), otherwise (and for a Delta
log that was cleaned up) by comparing a new listing with the one the data holds.

Each refresh follows the protocol of hsbloom/operations/protocol.py: a REFRESHING entry,
the work into a new data version, then the ACTIVE entry; until that entry is
written, readers use the previous ACTIVE entry and its data.
"""

from hsbloom.refresh.modes import MODES, refresh_index
from hsbloom.refresh.result import RefreshResult

__all__ = ["MODES", "RefreshResult", "refresh_index"]
