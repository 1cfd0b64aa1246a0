"""The keys of the `spark.hsbloom.*` settings that Python reads or names in messages.

Every setting is defined once, with its type, default and doc, in the jar's registry
(`hsbloom.conf.HsbloomConf`; docs/configuration.md lists them all). This module only spells the keys
Python needs, so that no other Python module does; it holds no defaults.
"""

from __future__ import annotations

ENABLED = "spark.hsbloom.enabled"
SYSTEM_PATH = "spark.hsbloom.system.path"
INDEX_PERMISSIONS = "spark.hsbloom.index.permissions"
INDEX_ENCRYPTION = "spark.hsbloom.index.encryption"
BUILD_ADOPT_NATIVE_FILTERS = "spark.hsbloom.build.adoptNativeFilters"
BUILD_ADOPT_ROW_GROUP_SIZED_FILTERS = "spark.hsbloom.build.adoptRowGroupSizedFilters"
