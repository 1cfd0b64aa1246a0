package hsbloom.index

import java.nio.file.{Files, Path => JPath}
import java.util.Base64

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.HadoopReadOptions
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.util.HadoopInputFile
import org.apache.spark.sql.Row
import org.scalatest.funsuite.AnyFunSuite

import hsbloom.format.TableSchemas
import hsbloom.sbbf.Sbbf
import hsbloom.shim.CollectionConverters._
import hsbloom.testing.SharedSession

/**
 * The sealed global filters of encrypted columns (`SealedGlobal`, docs/design/encryption.md): written through
 * parquet-java's PropertiesDrivenCryptoFactory with the test KMS client, read back with the keys they are exactly
 * the filters and counts written (a version's directories OR-ed, their counts summed); read without the keys or
 * with wrong ones, or tampered with, they fail closed: Left with why, never a filter.
 */
class SealedGlobalSuite extends AnyFunSuite with SharedSession {
  private lazy val root: JPath = suiteDir

  private def keyList(from: Int): String = Seq("k1" -> from, "k2" -> (from + 16)).map { case (id, at) =>
    s"$id:${Base64.getEncoder.encodeToString(Array.tabulate[Byte](16)(i => (at + i).toByte))}"
  }.mkString(",")

  /** What a session holding the keys reads (and the index writes) with. */
  private val keyed = Map(
    "parquet.crypto.factory.class" -> "org.apache.parquet.crypto.keytools.PropertiesDrivenCryptoFactory",
    "parquet.encryption.kms.client.class" -> "hsbloom.testkms.TestKmsClient",
    "parquet.encryption.key.list" -> keyList(0))

  private def conf(settings: Map[String, String]): Configuration = {
    val conf = new Configuration(spark.sparkContext.hadoopConfiguration)
    settings.foreach { case (k, v) => conf.set(k, v) }
    conf
  }

  /** A filter of `values`, serialized (header and bitset) as the build stores it. */
  private def filterOf(values: Seq[Long]): Array[Byte] = {
    val filter = Sbbf.ofBytes(1024)
    values.foreach(v => filter.insertHash(v * 0x9E3779B97F4A7C15L))
    filter.toBytes
  }

  /** Writes `filters` (column -> serialized filter, with its counts) sealed into the data directory `name`. */
  private def write(name: String, filters: Map[String, (Array[Byte], SealedGlobal.Counts)],
      masterKeys: Map[String, String], footerEncrypted: Boolean): String = {
    val dataPath = root.resolve(name).toString
    val rows = filters.toSeq.flatMap { case (c, (bytes, _)) =>
      val chunks = bytes.grouped(300).toSeq // several chunks, as a large filter is stored
      chunks.zipWithIndex.map { case (chunk, i) => Row(c, i, chunks.size, bytes.length.toLong, chunk) }
    }
    val chunks = spark.createDataFrame(rows.asJava, TableSchemas.GlobalTable)
    SealedGlobal.write(spark, chunks, filters.map { case (c, (_, n)) => c -> n }, dataPath, masterKeys,
      SealedTable.writeOptions(_, "k2", footerEncrypted, keyed, _))
    dataPath
  }

  private val a = filterOf(0L until 200L)
  private val b = filterOf(1000L until 1100L)
  private val countsA = SealedGlobal.Counts(250, 3, 200, a.length)
  private val countsB = SealedGlobal.Counts(100, 0, 100, b.length)

  private lazy val plaintextFooter = write("plaintext", Map("ssn" -> (a, countsA), "name" -> (b, countsB)),
    Map("ssn" -> "k1", "name" -> "k2"), footerEncrypted = false)
  private lazy val encryptedFooter = write("encrypted", Map("ssn" -> (b, countsB)), Map("ssn" -> "k1"),
    footerEncrypted = true)

  private def parts(dataPath: String): Seq[JPath] =
    Files.list(JPath.of(SealedGlobal.path(dataPath))).iterator().asScala.toSeq
      .filter(p => p.getFileName.toString.endsWith(".parquet")).sortBy(_.toString)

  test("read with the keys: the filters and counts written, each column's own; directories OR-ed, counts summed") {
    val withKeys = conf(keyed)
    assert(parts(plaintextFooter).size == 2) // one write per master key
    val ssn = SealedGlobal.load(Seq(plaintextFooter), "ssn", withKeys).toOption.get
    assert(ssn.serialized.sameElements(a) && ssn.counts == countsA)
    val name = SealedGlobal.load(Seq(plaintextFooter), "name", withKeys).toOption.get
    assert(name.serialized.sameElements(b) && name.counts == countsB)
    val both = SealedGlobal.load(Seq(plaintextFooter, encryptedFooter), "ssn", withKeys).toOption.get
    val or = Sbbf.fromBytes(a).union(Sbbf.fromBytes(b)).toBytes
    assert(both.serialized.sameElements(or))
    assert(both.counts == SealedGlobal.Counts(350, 3, 300, a.length))
    assert(SealedGlobal.load(Seq(plaintextFooter), "other", withKeys).left.toOption.get.contains("no global filter of 'other'"))
  }

  test("no filter byte or count is stored in plaintext, whichever footer mode") {
    val header = Sbbf.parseHeader(a).headerLength
    val windows = Seq(a, b).flatMap(f => f.drop(header).sliding(16, 16).filter(_.exists(_ != 0)).toSeq)
    for (part <- parts(plaintextFooter) ++ parts(encryptedFooter)) {
      val stored = Files.readAllBytes(part)
      assert(!windows.exists(w => stored.containsSlice(w)), part)
    }
    // An encrypted footer hides even the column names; a plaintext one shows the (public) schema only.
    parts(encryptedFooter).foreach(p => assert(!Files.readAllBytes(p).containsSlice("chunk_index".getBytes("UTF-8"))))
  }

  test("read without keys, with wrong ones or tampered with: Left with why, never a filter") {
    for (dataPath <- Seq(plaintextFooter, encryptedFooter)) {
      val noFactory = SealedGlobal.load(Seq(dataPath), "ssn", conf(Map.empty))
      assert(noFactory.isLeft, dataPath)
      // Wrong master keys, under another access token: parquet-java caches unwrapped keys per token (design note).
      val wrong = keyed ++ Map("parquet.encryption.key.list" -> keyList(64),
        "parquet.encryption.key.access.token" -> "wrong-keys")
      assert(SealedGlobal.load(Seq(dataPath), "ssn", conf(wrong)).isLeft, dataPath)
      // One directory the session cannot read fails the whole load, never a filter of the others alone.
      assert(SealedGlobal.load(Seq(dataPath, plaintextFooter), "ssn", conf(Map.empty)).isLeft, dataPath)
    }
    // A flipped byte in the filter's pages (the column chunk of `chunk`): AES-GCM's authentication fails.
    val part = parts(encryptedFooter).head
    val at = {
      val file = new Path(part.toUri)
      val reader = ParquetFileReader.open(HadoopInputFile.fromPath(file, conf(keyed)),
        HadoopReadOptions.builder(conf(keyed), file).build())
      val chunk = try reader.getFooter.getBlocks.get(0).getColumns.asScala.find(_.getPath.toDotString == "chunk").get
        finally reader.close()
      (chunk.getStartingPos + chunk.getTotalSize / 2).toInt
    }
    val original = Files.readAllBytes(part)
    val flipped = original.clone()
    flipped(at) = (flipped(at) ^ 1).toByte
    Files.write(part, flipped)
    Files.deleteIfExists(part.resolveSibling(s".${part.getFileName}.crc"))
    try assert(SealedGlobal.load(Seq(encryptedFooter), "ssn", conf(keyed)).isLeft)
    finally Files.write(part, original)
    assert(SealedGlobal.load(Seq(encryptedFooter), "ssn", conf(keyed)).toOption.get.serialized.sameElements(b))
  }
}
