"""hsbloom: Bloom filter data-skipping indexes for Apache Spark.

Start a session with `hsbloom.configure(SparkSession.builder, delta=True).getOrCreate()`,
then turn acceleration on with `hsbloom.enable(spark)`.
"""

from hsbloom.session import HsbloomJarError, configure, disable, enable, is_enabled
from hsbloom.version import __version__

__all__ = ["HsbloomJarError", "__version__", "configure", "disable", "enable", "is_enabled"]
