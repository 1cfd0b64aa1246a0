"""The index layout and log names are spelled alike on both sides.

The jar (hsbloom.index.Layout) is their definition: queries read indexes with it. Python writes the log and
the data directories, so each name Python uses must be the jar's, and the system path is resolved by the
jar for both.
"""

from __future__ import annotations

import json

from hsbloom import jar
from hsbloom.index import layout, log


def test_python_spells_every_layout_and_log_name_as_the_jar_does(spark):
    names = json.loads(jar.jar_class(spark, "layout").json())
    assert layout.LOG_DIR == names["log_dir"]
    assert layout.VERSION_PREFIX == names["version_prefix"]
    assert layout.FILES_TABLE == names["files_table"]
    assert layout.GLOBAL_TABLE == names["global_table"]
    assert layout.ZONES_TABLE == names["zones_table"]
    assert layout.DATA_LAYOUT == names["data_layout"]
    assert log.LOG_FORMAT_VERSION == names["log_format_version"]
    assert len(log.OperationLog(spark, "file:/nowhere/_hsbloom_log").entry_path(0).rsplit("/", 1)[1]) == (
        names["log_entry_digits"] + len(".json")
    )
    assert [s.value for s in log.State] == names["states"]
    assert sorted(s.value for s in log.STABLE_STATES) == sorted(names["stable_states"])
    assert layout.data_version_of(f"{names['version_prefix']}12") == 12


def test_the_system_path_defaults_under_the_warehouse_and_drops_trailing_slashes(spark):
    configured = spark.conf.get(layout.SYSTEM_PATH_CONF, None)
    try:
        spark.conf.unset(layout.SYSTEM_PATH_CONF)
        warehouse = spark.conf.get("spark.sql.warehouse.dir").rstrip("/")
        assert layout.system_path(spark) == f"{warehouse}/{json.loads(jar.jar_class(spark, 'layout').json())['default_system_dir']}"
        spark.conf.set(layout.SYSTEM_PATH_CONF, "/tmp/some/indexes//")
        assert layout.system_path(spark) == "/tmp/some/indexes"
        spark.conf.set(layout.SYSTEM_PATH_CONF, "/")
        assert layout.system_path(spark) == "/"
    finally:
        if configured:
            spark.conf.set(layout.SYSTEM_PATH_CONF, configured)
        else:
            spark.conf.unset(layout.SYSTEM_PATH_CONF)
