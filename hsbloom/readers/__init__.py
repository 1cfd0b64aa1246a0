"""An hsbloom index used without Spark: which Parquet files pyarrow, DuckDB or Polars need to read.

Needs the `readers` extra (pyarrow, numpy, xxhash, deltalake); `import hsbloom` does not import this package.
The SBBF (sbbf.py, sbbf_header.py) and the Parquet hash (parquet_hash.py, xxh64.py) are also what the tests
check the jar's filters with.
"""

from hsbloom.readers.index import Index, Pruned, UnusableIndexWarning, open_index
from hsbloom.readers.predicates import and_, contains, endswith, eq, ilike, is_null, isin, like, or_, startswith
from hsbloom.readers.tables import IndexDamageWarning

__all__ = ["Index", "IndexDamageWarning", "Pruned", "UnusableIndexWarning", "and_", "contains", "endswith", "eq",
           "ilike", "is_null", "isin", "like", "open_index", "or_", "startswith"]
