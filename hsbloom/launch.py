"""The command-line flags that put hsbloom into a Spark program started by pyspark's own scripts: the jar on the
driver's classpath, the extension (and with Delta: its package, extension and catalog), spelled once for the
`spark-sql` shell (`spark_sql_command`) and the Spark Connect server (`hsbloom.connect`), as `configure` sets
them for a classic session."""

from __future__ import annotations

import os
from pathlib import Path

from hsbloom.errors import InvalidArgumentError
from hsbloom.session import (
    DELTA_CATALOG_CLASS,
    DELTA_EXTENSION_CLASS,
    EXTENSION_CLASS,
    _merged,
    check_jar,
    default_jar_path,
    delta_maven_coordinate,
)


def spark_home() -> Path:
    """The Spark that pyspark ships (its bin/spark-submit, bin/spark-sql and jars/, the Connect server's among them)."""
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def check_master_and_conf(master: str, conf: dict[str, str]) -> None:
    if not isinstance(master, str) or not master.strip():
        raise InvalidArgumentError(f"master must be a Spark master URL such as 'local[*]', not {master!r}")
    for key, value in conf.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise InvalidArgumentError(
                f"conf maps setting names to string values; got {key!r}: {value!r} (write the value as a string)"
            )


def hsbloom_flags(
    delta: bool, jar: str | os.PathLike[str] | None, master: str, conf: dict[str, str], first: dict[str, str]
) -> list[str]:
    """spark-submit's flags for hsbloom: `--master`, the checked jar on the driver's classpath, Delta's package,
    then `--conf` for `first`, the extensions (and Delta's catalog) and `conf`; `spark.sql.extensions`,
    `spark.driver.extraClassPath` and `spark.jars.packages` given in `conf` are extended, not replaced."""
    conf = dict(conf)
    check_master_and_conf(master, conf)
    jar_path = Path(jar) if jar is not None else default_jar_path()
    check_jar(jar_path)
    extensions = [EXTENSION_CLASS] + ([DELTA_EXTENSION_CLASS] if delta else [])
    classpath = _merged(conf.pop("spark.driver.extraClassPath", None), str(jar_path.resolve()), separator=os.pathsep)
    packages = _merged(conf.pop("spark.jars.packages", None), *([delta_maven_coordinate()] if delta else []))
    settings = {**first, "spark.sql.extensions": _merged(conf.pop("spark.sql.extensions", None), *extensions)}
    if delta:
        settings["spark.sql.catalog.spark_catalog"] = DELTA_CATALOG_CLASS
    settings.update(conf)
    flags = ["--master", master, "--driver-class-path", classpath]
    if packages:
        flags += ["--packages", packages]
    for key, value in settings.items():
        flags += ["--conf", f"{key}={value}"]
    return flags


def spark_sql_command(
    delta: bool = False,
    jar: str | os.PathLike[str] | None = None,
    master: str = "local[*]",
    conf: dict[str, str] | None = None,
) -> list[str]:
    """The argv of pyspark's `spark-sql` shell with hsbloom (its statements: docs/sql.md); append `-f script.sql`
    or `-e "statement"`. The jar is checked first (HsbloomJarError). `shlex.join` of it is a shell line."""
    return [str(spark_home() / "bin" / "spark-sql")] + hsbloom_flags(delta, jar, master, dict(conf or {}), {})
