"""A SQL file's statements run one by one in a classic session with hsbloom, each result printed as pyspark's
spark-sql shell prints it with -S (a row a line, columns tab-separated): for a Spark whose distribution has no
spark-sql shell, as the Spark 3.5 / Scala 2.13 runtime the compatibility run assembles from the registry, which
serves no spark-hive-thriftserver (compat/quickstarts.py).

    python sql_file.py FILE [KEY=VALUE ...]     the session's settings as KEY=VALUE
"""

from __future__ import annotations

import sys
from typing import Any

from pyspark.sql import SparkSession

import hsbloom


def statements(text: str) -> list[str]:
    """The file's statements: its `--` comments dropped, split at the semicolons that end them."""
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--"))
    return [s.strip() for s in code.split(";") if s.strip()]


def shown(value: Any) -> str:
    """A value as the spark-sql shell shows it: NULL, true / false, arrays with their strings quoted."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(f'"{v}"' if isinstance(v, str) else shown(v) for v in value) + "]"
    return str(value)


def main(path: str, settings: list[str]) -> None:
    builder = SparkSession.builder.master("local[2]")
    for setting in settings:
        key, _, value = setting.partition("=")
        builder = builder.config(key, value)
    spark = hsbloom.configure(builder).getOrCreate()
    with open(path) as sql:
        for statement in statements(sql.read()):
            for row in spark.sql(statement).collect():
                print("\t".join(shown(v) for v in row), flush=True)
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
