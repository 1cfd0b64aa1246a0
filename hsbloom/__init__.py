"""hsbloom: Bloom filter data-skipping indexes for Apache Spark.

Start a session with `hsbloom.configure(SparkSession.builder, delta=True).getOrCreate()`,
build indexes with `hsbloom.Hyperspace(spark).create_index(df, hsbloom.BFIndexConfig(...))`,
then turn acceleration on with `hsbloom.enable(spark)`.
"""

from hsbloom.config import BFIndexConfig
from hsbloom.hashing import UnsupportedTypeError, hash_array, hash_scalar
from hsbloom.hyperspace import Hyperspace
from hsbloom.sbbf import Sbbf, SbbfFormatError
from hsbloom.session import HsbloomJarError, configure, disable, enable, is_enabled
from hsbloom.verify import VerifyResult
from hsbloom.session_checks import HsbloomSessionError
from hsbloom.version import __version__

__all__ = [
    "BFIndexConfig",
    "HsbloomJarError",
    "HsbloomSessionError",
    "Hyperspace",
    "Sbbf",
    "SbbfFormatError",
    "UnsupportedTypeError",
    "VerifyResult",
    "__version__",
    "configure",
    "disable",
    "enable",
    "hash_array",
    "hash_scalar",
    "is_enabled",
]
