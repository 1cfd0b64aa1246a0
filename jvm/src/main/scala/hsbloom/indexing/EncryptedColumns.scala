package hsbloom.indexing

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.crypto.ParquetCryptoRuntimeException
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat

import hsbloom.HsbloomException
import hsbloom.conf.HsbloomConf
import hsbloom.format.SourceFile
import hsbloom.shim.CollectionConverters._
import hsbloom.shim.FileRelation

/**
 * The refusal to index what Parquet modular encryption protects (docs/security.md#encrypted-columns).
 *
 * An index stores, per file and column, a Bloom filter of the values and the row and null counts, in plaintext.
 * Of an encrypted column it would tell anyone who can read the index whether a value is in the table and which
 * file holds it (Parquet encrypts a column's own Bloom filter with the column's key for this reason); of a file
 * whose footer is encrypted, also the counts and the schema that footer hides. With index encryption off, create
 * and every refresh ask this check before they write anything, and are refused when an indexed column is
 * encrypted in any file (a plaintext footer says which columns are) or any file's footer is encrypted (its magic
 * is `PARE`, and nothing of it can be read without the key). With `spark.hsbloom.index.encryption=columns` the
 * files' master keys are read instead (`EncryptionKeys`): files that disagree are refused; otherwise the build
 * seals the encrypted columns' rows, zones and global filters with those keys (`sealing`, `hsbloom.index.SealedTable`; docs/design/encryption.md).
 *
 * What it reads: nothing when the read has no crypto factory (`parquet.crypto.factory.class`, in the session or
 * in the read's options). parquet-java's readers, Spark's among them, then have no keys, so a build over an
 * encrypted column or footer fails in its scan before it stores a value. Else each file's footer once
 * (`ParquetTail`: one read of its last 64 KiB), on the driver for up to two files, else in one job
 * (`Adoption.inParts`).
 */
object EncryptedColumns {
  /** The Hadoop setting through which parquet-java's readers get the keys to decrypt with. */
  val CryptoFactory = "parquet.crypto.factory.class"

  /** What the build's scan of `df` reads Parquet with (the session's settings, the read's options over them). */
  private[hsbloom] def readConf(df: DataFrame): Option[Configuration] = {
    val relation = df.queryExecution.analyzed.collectFirst { case FileRelation(_, fs, _, _) => fs }
      .getOrElse(throw new IllegalArgumentException("not a scan of files"))
    if (!relation.fileFormat.isInstanceOf[ParquetFileFormat]) None // Delta's format is Parquet's too
    else Some(df.sparkSession.sessionState.newHadoopConfWithOptions(relation.options))
  }

  /**
   * Why `df` cannot be indexed on `columns` (its resolved column names) over `files`, naming one file; None when
   * it can. Reads the files' footers only when the read has a crypto factory (otherwise nothing encrypted can
   * be read, and a build over it fails in its scan).
   */
  def refusal(df: DataFrame, columns: Seq[String], files: Seq[SourceFile]): Option[String] =
    check(df, columns, files).left.toOption

  /**
   * Left `refusal`; else Right whether the files' footers are encrypted (so indexed, sealed, only with index
   * encryption on), which hides the source's schema and counts from readers without keys (the log then keeps
   * only the indexed columns of the schema: `IndexSource.hidingSchema`).
   */
  def check(df: DataFrame, columns: Seq[String], files: Seq[SourceFile]): Either[String, Boolean] = {
    val mode = try HsbloomConf.IndexEncryption.get(df.sparkSession) catch { // read first: a bad value always fails
      case e: IllegalArgumentException => throw HsbloomException.invalidConfig(e.getMessage)
    }
    if (files.isEmpty) return Right(false)
    val conf = readConf(df).filter(_.getTrimmed(CryptoFactory, "").nonEmpty).getOrElse(return Right(false))
    // Delta's column mapping by id leaves the columns' names in the files unknown: any encrypted column counts.
    val stored = Adoption.physicalNames(df, columns).fold(_ => columns.map(_ => None), _.map(Some(_)))
    val indexed = columns.zip(stored)
    if (mode == HsbloomConf.EncryptionColumns) {
      return keysRefusal(df, indexed, files, conf)
    }
    Adoption.inParts(df.sparkSession, files, conf)((part, c) => part.map(refusal(_, indexed, c)).collectFirst {
      case Some(why) => why
    })
      .flatten.headOption.toLeft(false)
  }

  /**
   * With index encryption on (`spark.hsbloom.index.encryption=columns`): why `files` cannot be indexed on
   * `indexed` encrypted, from the keys their footers name (`EncryptionKeys`); Right (whether the footers are
   * encrypted) when nothing indexed is encrypted, or when the keys agree (the build then seals: `Sealing`).
   */
  private def keysRefusal(df: DataFrame, indexed: Seq[(String, Option[String])], files: Seq[SourceFile],
      conf: Configuration): Either[String, Boolean] =
    indexKeys(df, indexed, files, conf).map(keys => keys.footerEncrypted)

  private val Setting = s"${HsbloomConf.IndexEncryption.key}=${HsbloomConf.EncryptionColumns}"

  /** The keys of `files` for `indexed` (`EncryptionKeys.agree`); Left why they cannot be used. */
  private def indexKeys(df: DataFrame, indexed: Seq[(String, Option[String])], files: Seq[SourceFile],
      conf: Configuration): Either[String, EncryptionKeys.IndexKeys] = {
    val factory = EncryptionKeys.checkFactory(conf)
    factory.left.foreach(why => return Left(s"index encryption ($Setting) cannot be used: $why"))
    val read = Adoption.inParts(df.sparkSession, files, conf) { (part, c) =>
      part.map(f => f.path -> keysOf(f, c)).toVector
    }.flatten
    read.collectFirst { case (file, Left(why)) => s"the keys of $file cannot be known: $why" }.toLeft(())
      .flatMap(_ => EncryptionKeys.agree(indexed, read.collect { case (file, Right(k)) => file -> k }).left
        .map(why => s"index encryption ($Setting) cannot be used: $why"))
  }

  /**
   * How a build seals its encrypted rows (`SealedTable`): per sealed indexed column its master key (with
   * encrypted footers every indexed column, the unencrypted ones under the footer key: the footer hides their
   * counts), the footer key and mode, and the read's `parquet.*` options (its crypto factory and KMS settings).
   */
  final case class Sealing(masterKeys: Map[String, String], footerKey: String, footerEncrypted: Boolean,
      readOptions: Map[String, String]) {
    def options(masterKey: String, fields: Seq[String]): Map[String, String] =
      hsbloom.index.SealedTable.writeOptions(masterKey, footerKey, footerEncrypted, readOptions, fields)
  }

  /**
   * The sealing of a build of `df` on `columns` over `files` with index encryption on; None when nothing indexed
   * is encrypted (or encryption is off, or the read has no crypto factory). Reads the footers again: `refusal`
   * passed them before the operation began.
   */
  def sealing(df: DataFrame, columns: Seq[String], files: Seq[SourceFile]): Option[Sealing] = {
    if (files.isEmpty || HsbloomConf.IndexEncryption.get(df.sparkSession) != HsbloomConf.EncryptionColumns) return None
    val conf = readConf(df).filter(_.getTrimmed(CryptoFactory, "").nonEmpty).getOrElse(return None)
    val stored = Adoption.physicalNames(df, columns).fold(_ => columns.map(_ => None), _.map(Some(_)))
    val keys = indexKeys(df, columns.zip(stored), files, conf)
      .fold(why => throw HsbloomException.encryptedSource(why), identity)
    if (keys.columns.isEmpty && !keys.footerEncrypted) return None
    val masterKeys = if (!keys.footerEncrypted) keys.columns
      else columns.map(c => c -> keys.columns.getOrElse(c, keys.footerKey.get)).toMap
    Some(Sealing(masterKeys, keys.footerKey.getOrElse(masterKeys.values.min), keys.footerEncrypted,
      readOptions(df).filter(_._1.startsWith("parquet."))))
  }

  /** The options of `df`'s file scan. */
  private def readOptions(df: DataFrame): Map[String, String] =
    df.queryExecution.analyzed.collectFirst { case FileRelation(_, fs, _, _) => fs.options }.getOrElse(Map.empty)

  /** The keys of `file`'s footer (an encrypted one decrypted with `conf`'s keys); Left why not. */
  private def keysOf(file: SourceFile, conf: Configuration): Either[String, EncryptionKeys.FileKeys] = {
    val path = new Path(file.path)
    val opened = try ParquetTail.open(path, conf, file.size, encrypted = true) catch {
      case NonFatal(e) => return Left(s"it cannot be read (${e.getMessage})")
    }
    opened.flatMap(tail => try EncryptionKeys.ofFooter(tail.footer, tail.encryptedFooter, path, conf) finally tail.close())
  }

  /**
   * Why `file` cannot be indexed on `columns` (each with its name in the Parquet files; None when unknown), as
   * the user reads it; None when it can. A file that cannot be read at all is not refused here: the build fails on it.
   */
  def refusal(file: SourceFile, columns: Seq[(String, Option[String])], conf: Configuration): Option[String] = {
    val path = new Path(file.path)
    val footerHidden = footerRefused(columns.map(_._1), file.path, _)
    val opened = try ParquetTail.open(path, conf, file.size) catch { case NonFatal(_) => return None }
    opened match {
      case Left(ParquetTail.EncryptedFooter) => Some(footerHidden("has an encrypted footer"))
      case Left(_) => None
      case Right(tail) => try {
        val chunks = RowGroups.parse(tail.footer, path, conf).getBlocks.asScala.flatMap(_.getColumns.asScala)
        columns.collectFirst {
          case (name, stored) if chunks.exists(c => c.isEncrypted && holds(c, stored)) => columnRefused(name, file.path)
        }
      } catch {
        case e: ParquetCryptoRuntimeException => Some(footerHidden(s"has a footer read only with keys (${e.getMessage})"))
        case NonFatal(_) => None
      } finally tail.close()
    }
  }

  /** Whether `chunk` is of the column stored as `stored` (matched as Spark's reader may: ignoring case); None: any. */
  private def holds(chunk: ColumnChunkMetaData, stored: Option[String]): Boolean = {
    val path = chunk.getPath.toArray
    stored.forall(name => path.length == 1 && path(0).equalsIgnoreCase(name))
  }

  private val Planned = s"index encryption (${HsbloomConf.IndexEncryption.key}=${HsbloomConf.EncryptionColumns}) " +
    "indexes it with its filters and counts encrypted under the files' keys (docs/security.md#encrypted-columns)"

  private def columnRefused(column: String, file: String): String =
    s"column '$column' is encrypted (Parquet modular encryption; for one, in $file), and the index would store " +
      "which values each file holds in plaintext: anyone who can read the index, without the column's key, could " +
      "learn whether a value is in the table and which file holds it. Index other columns of this table, or keep " +
      s"this column unencrypted; $Planned"

  private def footerRefused(columns: Seq[String], file: String, how: String): String =
    columns.map(c => s"column '$c'").mkString(", ") + s" cannot be indexed: $file $how (Parquet modular " +
      "encryption), and the index would store in plaintext what that footer hides: its row and null counts, its " +
      "schema, and which values it holds. No column of a table with encrypted footers can be indexed: write it " +
      s"with parquet.encryption.plaintext.footer=true to index its unencrypted columns, or keep it unencrypted; $Planned"

  /**
   * The sealed columns' global filters (`chunks`, cached by the build), with their counts, which the log leaves
   * out (`SealedGlobal`); the cache is freed whatever happens.
   */
  def writeSealedGlobal(spark: org.apache.spark.sql.SparkSession, chunks: DataFrame, global: Map[String, (Long, Long)],
      stats: Seq[FileStats], request: BuildRequest): Unit = try {
    val sealing = request.sealing.get
    val byColumn = stats.groupBy(_.column)
    val counts = global.filter(g => request.sealedColumns(g._1)).map { case (c, (ndv, bytes)) =>
      val rows = byColumn.getOrElse(c, Nil)
      c -> hsbloom.index.SealedGlobal.Counts(rows.map(_.rows).sum, rows.map(_.nulls).sum, ndv, bytes)
    }
    hsbloom.index.SealedGlobal.write(spark, chunks, counts, request.dataPath, sealing.masterKeys, sealing.options)
  } finally chunks.unpersist()
}
