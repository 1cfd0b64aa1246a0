package hsbloom

/**
 * The one place that touches Spark-private or version-specific API, Delta's
 * classes (by name or by reflection: the jar is compiled without Delta) and
 * JDK internals. A Spark or Delta upgrade that breaks hsbloom should break
 * here, and only here; the rest of the jar uses this small API.
 *
 * The shim is a leaf: it imports no other hsbloom package, so a change to it
 * is a change to Spark's side only. What it needs of the pruning it declares
 * as small interfaces the pruning implements (`PrunedListing`,
 * `ZonedScan.Selection`).
 *
 *
 *  - `ClassicDataset`: the Dataset class Python's DataFrames are on the JVM
 *    (Spark 4's `org.apache.spark.sql.classic`, 3.5's `sql`: `Classic`, per
 *    line), for methods Python calls.
 *  - `Collations`: whether a string type compares as its bytes (Spark 4's
 *    collations; none on 3.5). `CaseMappings`: every lower-case form Spark's
 *    `Lower` may give a string (ICU's mapping on Spark 4, the JVM's). `BroadcastSubquery`: Spark's subquery of a
 *    broadcast's key (one index on 3.5, a sequence on 4).
 *  - `FileRelation`: the extractor of a logical scan of files (`LogicalRelation`
 *    over a `HadoopFsRelation`; its field list changes between Spark versions),
 *    and `FileSources`: a relation's format name and whether a listing is
 *    Spark's fixed in-memory one.
 *  - `Delta`: Delta's file indexes and formats recognized by class name, and
 *    what hsbloom reads from them by reflection (snapshot version, table path,
 *    column mapping).
 *  - `PrunedFileSourceScanExec`: the subclass of Spark's physical file scan
 *    that adds hsbloom's metrics (it repeats the scan's constructor), of what
 *    its file index's latest listing pruned (`PrunedListing`), and
 *    `ColumnarScan`: the file scan under whole-stage codegen and the
 *    columnar-to-row step, `BroadcastKeys`: a broadcast hash join's keys
 *    handed to a probe-side scan as a subquery over the join's own broadcast
 *    (as Spark's dynamic partition pruning builds it), and `ZonedScan`: a file scan's splits restricted to
 *    the row groups a zone selection keeps (`ZonedScan.Selection`, carried by
 *    a listed file's metadata: `ZonedScan.carry`; docs/design/zones.md).
 *  - `CurrentInputFile`: the file block a scan task reads, from Spark's
 *    package-private holder. Its file is in this folder, but it is declared in
 *    the package `org.apache.spark.hsbloom`, because Scala grants
 *    `private[spark]` access only inside `org.apache.spark`.
 *  - `JarObjectInput`: Java deserialization that resolves classes with the
 *    jar's class loader.
 *  - `ParquetFooters`: what the footer model of the Parquet Spark ships has
 *    in some releases and not others (a bloom filter's recorded length).
 *  - `CollectionConverters`: `asScala` and `asJava`, one object per Scala
 *    version (its files are in src/main/scala-2.12 and scala-2.13).
 *  - `DelegatingFileIndex`: a `FileIndex` that forwards every member of
 *    Spark's internal trait to another one but `listFiles`, for hsbloom's
 *    wrappers (the build's selection of files, the pruning's file indexes).
 *  - `Datasets`: the DataFrame of a logical plan (`Dataset.ofRows`), for
 *    the query of `EXPLAIN BLOOMFILTER`. Declared in `org.apache.spark.sql.hsbloom`
 *    (its files are in the version folders), since Spark keeps `ofRows` `private[sql]`.
 *  - `DelegatingParser`: a parser that claims its own statements and hands the
 *    rest on; the members Spark's `ParserInterface` gained by line come from
 *    the version folders' `ParameterizedParsing`, `RoutineParsing` and
 *    `StatementSplitting`.
 *
 * Version-specific pieces live in jvm/src/main/spark-X.Y[-A.B] (the lines they
 * serve; build.sbt adds the folders of each line).
 */
package object shim {
  /** The JVM class of a Python DataFrame's `_jdf` (Spark 4's `org.apache.spark.sql.classic.Dataset`). */
  type ClassicDataset[T] = Classic.Dataset[T]

  object ClassicDataset {
    /** `df` as the classic Dataset it is in a driver (the API's DataFrame type is its abstract parent). */
    def of(df: org.apache.spark.sql.DataFrame): ClassicDataset[org.apache.spark.sql.Row] =
      df.asInstanceOf[ClassicDataset[org.apache.spark.sql.Row]]

    /** The DataFrame of an unresolved or analyzed `plan` (Spark's `Dataset.ofRows`, `private[sql]`). */
    def ofRows(spark: org.apache.spark.sql.SparkSession,
        plan: org.apache.spark.sql.catalyst.plans.logical.LogicalPlan): org.apache.spark.sql.DataFrame =
      org.apache.spark.sql.hsbloom.Datasets.ofRows(spark, plan)
  }
}
