package hsbloom.testing

/** What the Spark (and its Delta) under test can do, where lines differ: Spark 4 and Delta 4.4 can all of it. */
object SparkFeatures {
  /** Parquet's INT32 read as BIGINT (a reader's schema wider than the file's). */
  val readsWidenedParquetInts: Boolean = true
  /** Delta's type widening (ALTER COLUMN ... TYPE BIGINT on an INT column). */
  val deltaTypeWidening: Boolean = true
  /** `decimal(38, 1) column = 10^37` is planned (Spark 3.5 overflows the literal's cast under ANSI instead). */
  val plansWideDecimalLiterals: Boolean = true
  /** `timestamp_ntz column = TIMESTAMP literal` is planned on the literal's side. */
  val castsNtzColumnsToTimestamp: Boolean = false
}
