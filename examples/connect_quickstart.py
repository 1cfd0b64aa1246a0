"""hsbloom from a Spark Connect client: index a table, look up one key, refresh after an append.

Run it with `.venv/bin/python examples/connect_quickstart.py`: it starts a local Spark Connect server with
hsbloom (`hsbloom.start_connect_server`; a real deployment runs the command `hsbloom.connect_server_command`
prints, docs/deploy.md#spark-connect) and works through a Connect client, which has no JVM of its own: every
hsbloom call is one SQL statement the server's jar runs. `--remote sc://host:port` uses a running server
instead. The data and the index go to a fresh directory under the system's temporary directory.
"""

from __future__ import annotations

import argparse
import tempfile
from contextlib import ExitStack

from pyspark.sql import SparkSession

import hsbloom
import hsbloom.settings


def files_read(df) -> int:  # noqa: ANN001 - a Connect DataFrame
    """Run `df` and return the files its scans read, from the metrics the server sends with the result."""
    df.collect()
    _, nodes = df.executionInfo.metrics.extract_graph()
    return sum(m.value for node in nodes.values() for m in node.metrics if m.name == "numFiles")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--remote", help="the sc:// URL of a running server with hsbloom (default: start one)")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="hsbloom-connect-")
    with ExitStack() as stack:
        url = args.remote or stack.enter_context(hsbloom.start_connect_server(port=15002)).url
        spark = SparkSession.builder.remote(url).getOrCreate()
        spark.conf.set(hsbloom.settings.SYSTEM_PATH, f"{work}/indexes")
        events = f"{work}/events"
        spark.range(0, 400_000, numPartitions=16).selectExpr("xxhash64(id) AS user_id", "id AS seq") \
            .write.parquet(events)

        hs = hsbloom.Hyperspace(spark)
        hs.create_index(spark.read.parquet(events), hsbloom.BFIndexConfig("connect_ids", ["user_id"]))
        hs.indexes().show(truncate=False)

        lookup = spark.read.parquet(events).where("user_id = xxhash64(4242L)")
        hsbloom.disable(spark)
        off = files_read(lookup)
        hsbloom.enable(spark)
        print(f"lookup: {lookup.count()} row; files read with hsbloom off: {off}, on: {files_read(lookup)}")
        hs.explain(lookup)

        spark.range(400_000, 401_000, numPartitions=2).selectExpr("xxhash64(id) AS user_id", "id AS seq") \
            .write.mode("append").parquet(events)
        print(hs.refresh_index("connect_ids", mode="incremental").message)
        print(hs.verify_index("connect_ids"))
        hs.delete_index("connect_ids")
        hs.vacuum_index("connect_ids")
        spark.stop()


if __name__ == "__main__":
    main()
