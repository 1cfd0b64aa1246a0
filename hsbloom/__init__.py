"""hsbloom: Bloom filter data-skipping indexes for Apache Spark.

Start a session with `hsbloom.configure(SparkSession.builder, delta=True).getOrCreate()`,
build indexes with `hsbloom.Hyperspace(spark).create_index(df, hsbloom.BFIndexConfig(...))`,
then turn acceleration on with `hsbloom.enable(spark)`. On Spark Connect, the server gets hsbloom from
`hsbloom.connect_server_command(...)` (or `hsbloom.start_connect_server(...)` on this machine).
"""

from hsbloom.config import BFIndexConfig
from hsbloom.connect import ConnectServer, connect_server_command, start_connect_server
from hsbloom.errors import HsbloomJarError, HsbloomSessionError, UnsupportedSparkError
from hsbloom.hyperspace import Hyperspace
from hsbloom.launch import spark_sql_command
from hsbloom.results import IndexInfo, RefreshResult, VerifyResult
from hsbloom.session import configure, disable, enable, is_enabled
from hsbloom.version import __version__

__all__ = [
    "BFIndexConfig",
    "ConnectServer",
    "HsbloomJarError",
    "HsbloomSessionError",
    "Hyperspace",
    "IndexInfo",
    "RefreshResult",
    "UnsupportedSparkError",
    "VerifyResult",
    "__version__",
    "configure",
    "connect_server_command",
    "disable",
    "enable",
    "is_enabled",
    "spark_sql_command",
    "start_connect_server",
]
