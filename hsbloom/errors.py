"""The exceptions hsbloom's index management raises, so callers can tell them apart.

Every message names the index, what is wrong, and what to do about it.
"""

from __future__ import annotations


class HsbloomError(Exception):
    """Base class of hsbloom's index-management errors."""


class InvalidConfigError(HsbloomError, ValueError):
    """A BFIndexConfig field is invalid (name, columns, fpp, expected_num_items)."""


class UnsupportedSourceError(HsbloomError, ValueError):
    """The DataFrame is not a plain scan of files, or an indexed column is unknown or of an unsupported type."""


class IndexNotFoundError(HsbloomError):
    """No index of that name exists (or it was vacuumed)."""


class IndexExistsError(HsbloomError):
    """create_index was asked for a name that an ACTIVE or DELETED index holds."""


class IndexStateError(HsbloomError):
    """The operation is not allowed in the index's current state (e.g. restoring an ACTIVE index)."""


class ConcurrentOperationError(HsbloomError):
    """Another writer is running an operation on the index, or won the race for the next log entry."""


class IndexBuildError(HsbloomError):
    """Building the index data failed; the index was rolled back to its previous state."""


class CorruptLogError(HsbloomError):
    """A log entry cannot be read (unparseable, or written by a newer hsbloom log format)."""
