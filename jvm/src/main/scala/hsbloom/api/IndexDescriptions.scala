package hsbloom.api

import java.io.FileNotFoundException

import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.functions.{coalesce, col, lit}

import hsbloom.{HsbloomException, IndexInfo}
import hsbloom.format.{Layout, LogEntry, State, TableSchemas}
import hsbloom.index.{IndexDamage, IndexTables}
import hsbloom.operations.{IndexContext, SystemPath}

/**
 * What indexes exist and what they hold, for people and programs (`Hyperspace.indexes`, `index`, `indexFiles`):
 * everything comes from each index's latest log entry (a stable entry carries the config, the source and the
 * build summary), so listing reads a few small files and never the index tables.
 */
object IndexDescriptions {
  /** The latest entry; if it is unreadable (being written, or damaged), the latest stable one; and the problems met. */
  private def latest(ctx: IndexContext): (Option[LogEntry], Seq[String]) =
    try { (ctx.log.latest(), Nil) } catch {
      case e: HsbloomException if e.condition == HsbloomException.CorruptLog =>
        try { (ctx.log.latestStable(), Seq(e.text)) } catch {
          case f: HsbloomException if f.condition == HsbloomException.CorruptLog => (None, Seq(e.text, f.text))
        }
    }

  /** The named index, in whatever state its latest entry records. */
  def index(spark: SparkSession, name: String): IndexInfo = {
    val ctx = IndexContext.open(spark, name)
    latest(ctx) match {
      case (None, problems) if problems.nonEmpty => throw HsbloomException.corruptLog(problems.last)
      case (Some(e), problems) if e.state != State.DoesNotExist && e.config.isDefined => info(ctx, e, problems)
      case _ => throw HsbloomException.indexNotFound(s"index '$name' does not exist")
    }
  }

  /**
   * Every index under the system path whose latest entry is not DOESNOTEXIST, by name, as rows of
   * `IndexInfo.listingSchema`; an index none of whose stable entries is readable is listed as UNREADABLE.
   */
  def listing(spark: SparkSession): DataFrame = {
    val root = SystemPath.qualified(spark)
    val fs = root.getFileSystem(spark.sessionState.newHadoopConf())
    val names = try fs.listStatus(root).filter(_.isDirectory).map(_.getPath.getName).sorted.toSeq
      catch { case _: FileNotFoundException => Nil }
    val rows = names.flatMap { name =>
      scala.util.Try(IndexContext.open(spark, name)).toOption.flatMap { ctx => // not a directory hsbloom made
        try latest(ctx) match {
          case (None, problems) if problems.nonEmpty => Some(IndexInfo.unreadableRow(name, problems))
          case (Some(e), problems) if e.state != State.DoesNotExist && e.config.isDefined =>
            Some(IndexInfo.listingRow(info(ctx, e, problems)))
          case _ => None
        } catch {
          // The index of a table this user cannot read is closed to this user too (docs/security.md): not listed.
          case e: java.io.IOException if deniedAccess(e) => None
        }
      }
    }
    spark.createDataFrame(java.util.Arrays.asList(rows: _*), IndexInfo.listingSchema)
  }

  /** Whether `e` (or a cause) says the file system refused this user access. */
  private def deniedAccess(e: Throwable): Boolean = Iterator.iterate(e)(_.getCause).takeWhile(_ != null).exists {
    case _: org.apache.hadoop.security.AccessControlException | _: java.nio.file.AccessDeniedException => true
    case r: org.apache.hadoop.ipc.RemoteException =>
      r.getClassName == classOf[org.apache.hadoop.security.AccessControlException].getName
    case _ => false
  }

  private def info(ctx: IndexContext, e: LogEntry, logDamage: Seq[String]): IndexInfo = {
    val config = e.config.get
    val source = e.source.get
    val summary = e.summary
    val (fileFpp, sharedFpp) = e.fpps
    val dataPaths = e.parts.map(v => ctx.dataPath(v).toString) // from where the log is: a moved system path works
    IndexInfo(
      name = ctx.name,
      state = e.state.name,
      config = config,
      source = IndexInfo.SourceInfo(source.format, source.rootPaths, source.options.verbatim, source.options.hashed,
        Option(source.options.salt).filter(_.nonEmpty), source.table, source.deltaVersion, source.schema,
        source.partitionColumns, source.readFacts, source.userSchema),
      dataVersion = e.dataVersion.getOrElse(-1L),
      dataPath = e.dataVersion.map(v => ctx.dataPath(v).toString).getOrElse(""),
      dataPaths = dataPaths,
      numFiles = summary.map(_.numFiles).getOrElse(source.legacyFiles.size.toLong),
      fileFpp = fileFpp,
      sharedFpp = sharedFpp,
      numRows = summary.map(_.numRows),
      indexBytes = summary.map(_.indexBytes),
      columns = config.storedColumns.flatMap { stored =>
        val c = stored.key
        summary.flatMap(_.column(c)).map(s => IndexInfo.ColumnStatistics(c, source.schemaOf(stored.source).getOrElse("?"),
          s.numRows, s.numNulls, s.ndv, s.fileFilterBytes, s.globalFilterBytes))
      },
      logId = e.id,
      lastOperation = e.operation,
      updatedMs = e.timestampMs,
      staleness = IndexInfo.Staleness(
        appendedFilesNotIndexed = e.pending.map(_.appended.size.toLong).getOrElse(0L),
        deletedFilesStillIndexed = e.pending.map(_.deletedFileIds.size.toLong).getOrElse(0L),
        globalFilterDeletedFiles = summary.map(_.globalFilterDeletedFiles).getOrElse(0L),
        dataDeltaVersion = source.deltaVersion,
        checkedDeltaVersion = e.pending.map(_.deltaVersion).getOrElse(source.deltaVersion),
        checkedMs = e.pending.map(_.checkedMs)),
      damage = logDamage ++ IndexDamage.of(dataPaths).map { case (f, p) => s"$f: $p" },
      adoptedFiles = summary.flatMap(_.adoption).map(_.adoptedFiles),
      hashedFiles = summary.flatMap(_.adoption).map(_.hashedFiles).getOrElse(Map.empty),
      needsFullRefresh = !e.dataLayout.contains(Layout.DataLayout))
  }

  /**
   * The source files of index `name`'s current version, with where each one's filters came from ("adopted" from
   * its own Parquet Bloom filters, else "hashed"), read from the version's file tables.
   */
  def files(spark: SparkSession, name: String): DataFrame = {
    val ctx = IndexContext.open(spark, name)
    val e = latest(ctx)._1.filter(e => e.state != State.DoesNotExist && e.config.isDefined)
      .getOrElse(throw HsbloomException.indexNotFound(s"index '$name' does not exist"))
    if (e.summary.isEmpty || e.parts.isEmpty) return spark.createDataFrame(java.util.Collections.emptyList[Row](), IndexInfo.filesSchema)
    val rows = IndexTables.readStoredFileTables(spark, e.parts.map(v => ctx.dataPath(v).toString))
    // A version's older directories may hold files since deleted (their ids are dropped); a table written before
    // adoption has no filter source: every filter was hashed.
    rows.where(!col("file_id").isin(e.droppedFileIds: _*))
      .select(col("file_id"), col("file_path"), col("file_size"), col("file_mtime"),
        coalesce(col(TableSchemas.FilterSource), lit(TableSchemas.HashedFilter)).as("filter_source"))
      .distinct().orderBy("file_path")
  }
}
