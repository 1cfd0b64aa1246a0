package hsbloom.indexing

import java.nio.file.Files
import java.util.Base64

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.example.data.simple.SimpleGroupFactory
import org.apache.parquet.HadoopReadOptions
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.example.ExampleParquetWriter
import org.apache.parquet.hadoop.util.HadoopInputFile
import org.apache.parquet.schema.MessageTypeParser
import org.apache.spark.sql.types.{DataType, LongType, StringType}
import org.scalatest.funsuite.AnyFunSuite

import hsbloom.format.SourceFile
import hsbloom.shim.CollectionConverters._

/**
 * What the build sees of files written with Parquet modular encryption (parquet-java's
 * PropertiesDrivenCryptoFactory, keys from the test KMS client): which are refused (`EncryptedColumns`), and that
 * no encrypted column's native Bloom filter is ever adopted (`NativeFilters`), whichever footer mode.
 */
class EncryptedColumnsSuite extends AnyFunSuite {
  /** What a session holding the keys reads with. */
  private val keyed = {
    val conf = new Configuration()
    conf.set(EncryptedColumns.CryptoFactory, "org.apache.parquet.crypto.keytools.PropertiesDrivenCryptoFactory")
    conf.set("parquet.encryption.kms.client.class", "hsbloom.testkms.TestKmsClient")
    conf.set("parquet.encryption.key.list", Seq("k1" -> 0, "k2" -> 16).map { case (id, from) =>
      s"$id:${Base64.getEncoder.encodeToString(Array.tabulate[Byte](16)(i => (from + i).toByte))}"
    }.mkString(","))
    conf
  }

  private val schema = MessageTypeParser.parseMessageType("message people { required int64 id; required binary ssn (STRING); }")
  private val types: Seq[DataType] = Seq(LongType, StringType)

  /** A file of 100 people with native Bloom filters on both columns; `encryption`: ssn under k1, the footer under k2. */
  private def people(encryption: Option[String], ssnKey: String = "k1", internalKeys: Boolean = true): SourceFile = {
    val conf = new Configuration(keyed)
    conf.setBoolean("parquet.encryption.key.material.store.internally", internalKeys)
    encryption.foreach { footer =>
      conf.set("parquet.encryption.column.keys", s"$ssnKey:ssn")
      conf.set("parquet.encryption.footer.key", "k2")
      conf.set("parquet.encryption.plaintext.footer", (footer == "plaintext").toString)
    }
    val path = new Path(Files.createTempDirectory("encrypted").resolve("people.parquet").toUri)
    val writer = ExampleParquetWriter.builder(path).withConf(conf).withType(schema)
      .withBloomFilterEnabled(true).withBloomFilterNDV("id", 100).withBloomFilterNDV("ssn", 100).build()
    val rows = new SimpleGroupFactory(schema)
    try {
      (0 until 100).foreach(i => writer.write(rows.newGroup().append("id", i.toLong).append("ssn", f"${i * 7919}%09d")))
    } finally writer.close()
    SourceFile(0, path.toString, path.getFileSystem(conf).getFileStatus(path).getLen, 0L)
  }

  private lazy val plain = people(None)
  private lazy val plaintextFooter = people(Some("plaintext"))
  private lazy val encryptedFooter = people(Some("encrypted"))

  private def adopted(file: SourceFile, column: String): Either[String, AdoptedFile] =
    NativeFilters.read(file, Seq(column), Seq(types(schema.getFieldIndex(column))), 0.01, 0.01, zones = false,
      weakFileFilters = false, 1L << 22, keyed)

  private def refusal(file: SourceFile, column: String, stored: Option[String]): Option[String] =
    EncryptedColumns.refusal(file, Seq(column -> stored), keyed)

  test("a plain file is neither refused nor kept from adopting its filters") {
    assert(refusal(plain, "ssn", Some("ssn")).isEmpty)
    assert(adopted(plain, "ssn").isRight && adopted(plain, "id").isRight)
  }

  test("a plaintext footer: its encrypted column is refused and its filter never adopted; its other columns pass") {
    // The file does carry a filter of ssn, encrypted with ssn's key (read here with the keys).
    val path = new Path(plaintextFooter.path)
    val reader = ParquetFileReader.open(HadoopInputFile.fromPath(path, keyed), HadoopReadOptions.builder(keyed, path).build())
    try {
      val ssn = reader.getFooter.getBlocks.asScala.flatMap(_.getColumns.asScala).filter(_.getPath.toDotString == "ssn")
      assert(ssn.nonEmpty && ssn.forall(c => c.isEncrypted && c.getBloomFilterOffset >= 0))
    } finally reader.close()
    val refused = refusal(plaintextFooter, "ssn", Some("ssn")).get
    assert(refused.startsWith(s"column 'ssn' is encrypted (Parquet modular encryption; for one, in ${plaintextFooter.path})"))
    assert(refused.contains("Index other columns") && refused.contains("docs/security.md#encrypted-columns"))
    assert(refusal(plaintextFooter, "SSN", Some("SSN")).isDefined, "a name Spark matches ignoring case")
    assert(refusal(plaintextFooter, "id", Some("id")).isEmpty)
    assert(refusal(plaintextFooter, "id", None).isDefined, "stored names unknown: any encrypted column counts")
    assert(adopted(plaintextFooter, "ssn") == Left("encrypted columns"))
  }

  test("an encrypted footer: every column is refused, and nothing of the file is adopted") {
    val bytes = Files.readAllBytes(java.nio.file.Paths.get(new Path(encryptedFooter.path).toUri))
    assert(new String(bytes.takeRight(4), "US-ASCII") == "PARE")
    for (column <- Seq("id", "ssn")) {
      val refused = refusal(encryptedFooter, column, Some(column)).get
      assert(refused.startsWith(s"column '$column' cannot be indexed: ${encryptedFooter.path} has an encrypted footer"))
      assert(refused.contains("parquet.encryption.plaintext.footer=true"))
      assert(adopted(encryptedFooter, column) == Left(ParquetTail.EncryptedFooter))
    }
  }

  /** The keys `file`'s footer names (`EncryptionKeys`), read with the keys of the session. */
  private def keysOf(file: SourceFile): Either[String, EncryptionKeys.FileKeys] = {
    val path = new Path(file.path)
    val tail = ParquetTail.open(path, keyed, file.size, encrypted = true).toOption.get
    try EncryptionKeys.ofFooter(tail.footer, tail.encryptedFooter, path, keyed) finally tail.close()
  }

  test("index encryption reads each encrypted column's master key and the footer's, in both footer modes") {
    assert(keysOf(plain) == Right(EncryptionKeys.FileKeys(footerEncrypted = false, None, Map.empty)))
    for ((file, encrypted) <- Seq(plaintextFooter -> false, encryptedFooter -> true)) {
      assert(keysOf(file) == Right(EncryptionKeys.FileKeys(encrypted, Some("k2"), Map(Seq("ssn") -> "k1"))))
    }
    // No crypto factory. (A factory without a KMS client's settings is no test in this JVM: parquet-java caches
    // the KMS client and the keys it unwrapped, by access token, for parquet.encryption.cache.lifetime.seconds.)
    val noKeys = new Configuration()
    val path = new Path(encryptedFooter.path)
    val tail = ParquetTail.open(path, noKeys, encryptedFooter.size, encrypted = true).toOption.get
    val withoutKeys = try EncryptionKeys.ofFooter(tail.footer, encrypted = true, path, noKeys) finally tail.close()
    assert(withoutKeys.left.exists(_.startsWith("its footer cannot be read")), withoutKeys)
  }

  test("the key material: PropertiesDrivenCryptoFactory's, stored in the file, naming its master key") {
    def id(json: String) = EncryptionKeys.masterKeyId(json.getBytes("UTF-8"))
    assert(id("""{"keyMaterialType":"PKMT1","internalStorage":true,"masterKeyID":"k1","isFooterKey":false}""") == Right("k1"))
    assert(id("""{"keyMaterialType":"PKMT1","internalStorage":false,"keyReference":"r"}""").left.exists(
      _.contains("stored outside the file")))
    for (other <- Seq("k1", "", "[]", """{"keyMaterialType":"PKMT2","internalStorage":true,"masterKeyID":"k1"}""",
        """{"keyMaterialType":"PKMT1","internalStorage":"true","masterKeyID":"k1"}""")) {
      assert(id(other).left.exists(_.contains("not the key material")), other)
    }
    assert(id("""{"keyMaterialType":"PKMT1","internalStorage":true}""") == Left("its key material names no master key"))
    val other = new Configuration()
    other.set(EncryptedColumns.CryptoFactory, "org.apache.parquet.crypto.SomeOtherFactory")
    assert(EncryptionKeys.checkFactory(other).left.exists(_.contains("is not parquet-java's PropertiesDrivenCryptoFactory")))
    assert(EncryptionKeys.checkFactory(keyed) == Right(()))
  }

  test("files must agree on each indexed column's key and on the footer key") {
    import EncryptionKeys.{FileKeys, IndexKeys, agree}
    val a = "a" -> FileKeys(footerEncrypted = false, Some("f"), Map(Seq("ssn") -> "k1"))
    val plainFile = "p" -> FileKeys(footerEncrypted = false, None, Map.empty)
    assert(agree(Seq("SSN" -> Some("ssn"), "id" -> Some("id")), Seq(a, plainFile)) ==
      Right(IndexKeys(Map("SSN" -> "k1"), Some("f"), footerEncrypted = false)))
    val b = "b" -> FileKeys(footerEncrypted = true, Some("f"), Map(Seq("ssn") -> "k3"))
    assert(agree(Seq("ssn" -> Some("ssn")), Seq(a, b)) ==
      Left("column 'ssn' is encrypted with different keys: k1 (in a) and k3 (in b)"))
    assert(agree(Seq("id" -> Some("id")), Seq(a, b)) == Right(IndexKeys(Map.empty, Some("f"), footerEncrypted = true)))
    val c = "c" -> FileKeys(footerEncrypted = false, Some("g"), Map.empty)
    assert(agree(Seq("id" -> Some("id")), Seq(a, c)).left.exists(_.startsWith("the files' footers are encrypted with different keys")))
    assert(agree(Seq("id" -> None), Seq(a)).left.exists(_.contains("its name in the files is unknown")))
    // Key material in files beside the Parquet file (parquet-java's HadoopFSKeyMaterialStore): refused.
    assert(keysOf(people(Some("plaintext"), internalKeys = false)).left.exists(_.contains("stored outside the file")))
    // Real files: ssn under k1 in one, under k2 in another.
    val other = people(Some("plaintext"), ssnKey = "k2")
    val keys = Seq(plaintextFooter, other).map(f => f.path -> keysOf(f).toOption.get)
    assert(agree(Seq("ssn" -> Some("ssn")), keys).left.exists(_.startsWith("column 'ssn' is encrypted with different keys")))
  }
}
