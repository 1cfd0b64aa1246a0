package hsbloom

import org.apache.spark.sql.SparkSession

import hsbloom.api.HyperspaceApi

/**
 * Create, list and manage the Bloom filter indexes of a session's system path (docs/scala.md): the public class
 * Scala and Java callers construct. Its methods, default arguments included, are those of its body,
 * `hsbloom.api.HyperspaceApi`, the one API every client goes through (the SQL statements call it too), and every
 * failure is an `HsbloomException`.
 *
 * {{{
 *   val hs = new hsbloom.Hyperspace(spark)
 *   hs.createIndex(spark.read.parquet("/data/events"), BFIndexConfig("events_ids", Seq("user_id")))
 *   hs.indexes().show()
 * }}}
 */
class Hyperspace(spark: SparkSession) extends HyperspaceApi(spark)
