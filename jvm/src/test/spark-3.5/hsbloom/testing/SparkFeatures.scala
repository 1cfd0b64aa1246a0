package hsbloom.testing

/** What the Spark (and its Delta) under test can do, where lines differ: Spark 3.5 and Delta 3.3. */
object SparkFeatures {
  /** Spark 3.5's Parquet readers refuse INT32 as BIGINT ("Parquet column cannot be converted"). */
  val readsWidenedParquetInts: Boolean = false
  /** Delta 3.3 refuses ALTER COLUMN ... TYPE BIGINT on an INT column (DELTA_UNSUPPORTED_ALTER_TABLE_CHANGE_COL_OP). */
  val deltaTypeWidening: Boolean = false
  /** Spark 3.5 casts `10^37` to the column's decimal(38, 1) when planning `c = 10^37`, which overflows under ANSI:
   * the query fails in Spark itself, so there is nothing for the jar to translate. */
  val plansWideDecimalLiterals: Boolean = false
  /** Spark 3.5 plans `timestamp_ntz column = TIMESTAMP literal` as `CAST(column AS TIMESTAMP) = literal`, which
   * depends on the session's time zone: the jar keeps every file (conservative), where Spark 4 lets it probe. */
  val castsNtzColumnsToTimestamp: Boolean = true
}
