"""hsbloom: Bloom filter data-skipping indexes for Apache Spark.

Start a session with `hsbloom.configure(SparkSession.builder, delta=True).getOrCreate()` (or connect to a Spark
Connect server started with `hsbloom.start_connect_server`), build indexes with
`hsbloom.Hyperspace(spark).create_index(df, hsbloom.BFIndexConfig(...))`, then turn acceleration on with
`hsbloom.enable(spark)`.
"""

from hsbloom.config import BFIndexConfig
from hsbloom.hyperspace import Hyperspace
from hsbloom.results import IndexInfo, RefreshResult, VerifyResult
from hsbloom.session import HsbloomJarError, configure, disable, enable, is_enabled
from hsbloom.session_checks import HsbloomSessionError
from hsbloom.version import __version__

__all__ = [
    "BFIndexConfig",
    "HsbloomJarError",
    "HsbloomSessionError",
    "Hyperspace",
    "IndexInfo",
    "RefreshResult",
    "VerifyResult",
    "__version__",
    "configure",
    "disable",
    "enable",
    "is_enabled",
]
