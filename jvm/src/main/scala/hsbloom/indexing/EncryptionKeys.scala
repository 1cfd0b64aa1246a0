package hsbloom.indexing

import java.io.ByteArrayInputStream
import java.nio.charset.StandardCharsets

import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.crypto.{AesCipher, DecryptionPropertiesFactory, InternalFileDecryptor}
import org.apache.parquet.crypto.keytools.PropertiesDrivenCryptoFactory
import org.apache.parquet.format.{FileMetaData, Util}

import hsbloom.shim.CollectionConverters._

/**
 * Which master keys protect a source's encrypted columns and footers: what index encryption would encrypt each
 * indexed column's filters and counts with (docs/design/encryption.md). Read from the files' footers, never guessed.
 *
 * parquet-java's `PropertiesDrivenCryptoFactory` stores, as each encrypted column chunk's key metadata (and the
 * footer's), its key material as JSON: `keyMaterialType` `PKMT1`, `internalStorage`, and, when stored
 * internally, the `masterKeyID` the data key is wrapped with. That ID names the key in the KMS the source uses,
 * so an index table written with `parquet.encryption.column.keys = <masterKeyID>:<columns>` through the same
 * factory takes the same key, and a reader needs the same rights. Anything else is refused with its reason:
 * another factory (whose key metadata means nothing here), key material stored outside the files, files that
 * disagree on a column's key or on the footer key.
 */
object EncryptionKeys {
  /** The keys one file uses: its footer's (None: a plaintext footer not signed), and each encrypted column's by path. */
  final case class FileKeys(footerEncrypted: Boolean, footerKey: Option[String], columns: Map[Seq[String], String])

  /** The keys an index of a source would use: per indexed column (as the user names it) and for the footer. */
  final case class IndexKeys(columns: Map[String, String], footerKey: Option[String], footerEncrypted: Boolean)

  private val Json = new ObjectMapper()

  /**
   * The master key ID in `keyMetadata`, a column chunk's or a footer's key metadata as parquet-java's
   * `PropertiesDrivenCryptoFactory` writes it; Left why not (not its key material, stored outside the file).
   */
  def masterKeyId(keyMetadata: Array[Byte]): Either[String, String] = {
    val material = try Json.readTree(new String(keyMetadata, StandardCharsets.UTF_8)) catch {
      case NonFatal(_) => return Left("its key metadata is not the key material of PropertiesDrivenCryptoFactory")
    }
    def text(field: String): Option[String] = Option(material).filter(_.isObject).flatMap(m => Option(m.get(field)))
      .filter(_.isTextual).map(_.asText)
    val internal = Option(material).filter(_.isObject).flatMap(m => Option(m.get("internalStorage"))).filter(_.isBoolean)
    (text("keyMaterialType"), internal.map(_.asBoolean)) match {
      case (Some("PKMT1"), Some(false)) =>
        Left("its key material is stored outside the file (parquet.encryption.key.material.store.internally=false)")
      case (Some("PKMT1"), Some(true)) =>
        text("masterKeyID").filter(_.nonEmpty).toRight("its key material names no master key")
      case _ => Left("its key metadata is not the key material of PropertiesDrivenCryptoFactory")
    }
  }

  /** Left why `conf`'s crypto factory cannot be the index's (not `PropertiesDrivenCryptoFactory` or a subclass). */
  def checkFactory(conf: Configuration): Either[String, Unit] = {
    val name = conf.getTrimmed(EncryptedColumns.CryptoFactory, "")
    val factory: Option[Class[_]] = try Some(conf.getClassByName(name)) catch { case NonFatal(_) => None }
    if (factory.exists(classOf[PropertiesDrivenCryptoFactory].isAssignableFrom)) Right(())
    else Left(s"the crypto factory $name is not parquet-java's PropertiesDrivenCryptoFactory (nor a subclass), " +
      "whose key material alone hsbloom reads the master keys from")
  }

  /**
   * The keys of the Parquet file whose footer is `footer` (the bytes before its length and magic:
   * `ParquetTail`), `encrypted` when its magic is `PARE`: an encrypted footer is decrypted with `conf`'s crypto
   * factory (the session's keys), as parquet-java's reader does. Left why not.
   */
  def ofFooter(footer: Array[Byte], encrypted: Boolean, path: Path, conf: Configuration): Either[String, FileKeys] = {
    val in = new ByteArrayInputStream(footer)
    val (meta, footerMetadata) = try {
      if (!encrypted) {
        val meta = Util.readFileMetaData(in)
        (meta, Option(meta.getFooter_signing_key_metadata))
      } else {
        val crypto = Util.readFileCryptoMetaData(in)
        val decryptor = new InternalFileDecryptor(
          DecryptionPropertiesFactory.loadFactory(conf).getFileDecryptionProperties(conf, path))
        decryptor.setFileCryptoMetaData(crypto.getEncryption_algorithm, true, crypto.getKey_metadata)
        val meta = Util.readFileMetaData(in, decryptor.fetchFooterDecryptor(), AesCipher.createFooterAAD(decryptor.getFileAAD))
        (meta, Option(crypto.getKey_metadata))
      }
    } catch {
      case NonFatal(e) => return Left(s"its footer cannot be read (${e.getMessage})")
    }
    val footerKey = footerMetadata match {
      case None => Right(None)
      case Some(bytes) => masterKeyId(bytes).map(Some(_)).left.map(why => s"its footer key: $why")
    }
    footerKey.flatMap(key => columnKeys(meta, key).map(FileKeys(encrypted, key, _)))
  }

  /** Each encrypted column's master key in `meta`, by path (a column under the footer key gets `footerKey`). */
  private def columnKeys(meta: FileMetaData, footerKey: Option[String]): Either[String, Map[Seq[String], String]] = {
    val chunks = meta.getRow_groups.asScala.flatMap(_.getColumns.asScala).filter(_.isSetCrypto_metadata)
    val keys = chunks.map { chunk =>
      val crypto = chunk.getCrypto_metadata
      if (crypto.isSetENCRYPTION_WITH_COLUMN_KEY) {
        val withKey = crypto.getENCRYPTION_WITH_COLUMN_KEY
        val path = withKey.getPath_in_schema.asScala.toSeq
        masterKeyId(withKey.getKey_metadata).map(path -> _).left.map(why => s"column ${path.mkString(".")}: $why")
      } else {
        val path = Option(chunk.getMeta_data).map(_.getPath_in_schema.asScala.toSeq)
        (path, footerKey) match {
          case (Some(p), Some(key)) => Right(p -> key)
          case _ => Left("a column is encrypted with a footer key it does not name")
        }
      }
    }
    keys.collectFirst { case Left(why) => why }.toLeft(keys.collect { case Right(k) => k }.toMap)
  }

  /**
   * The keys an index of `columns` (each with its name in the files; None when unknown) over the files of
   * `keys` (each file's path and keys) would use; Left why there are none (a column's stored name unknown,
   * files that disagree on a column's key or on the footer key). A column encrypted in no file has no key.
   */
  def agree(columns: Seq[(String, Option[String])], keys: Seq[(String, FileKeys)]): Either[String, IndexKeys] = {
    // The one key of `found` (file, key); Left the first two keys, each with the first file that has it.
    def distinct[T](found: Seq[(String, T)]): Either[String, Option[T]] = found.map(_._2).distinct match {
      case Seq() => Right(None)
      case Seq(key) => Right(Some(key))
      case several => Left(several.take(2).map(key => s"$key (in ${found.find(_._2 == key).get._1})").mkString(" and "))
    }
    val perColumn = columns.map { case (name, stored) =>
      val found = keys.flatMap { case (file, k) =>
        // Matched as Spark's reader may match a name: ignoring case. Unknown names: every encrypted column.
        k.columns.collect { case (path, key) if stored.forall(s => path.map(_.toLowerCase) == Seq(s.toLowerCase)) =>
          file -> key
        }
      }
      if (stored.isEmpty && found.nonEmpty) Left(s"column '$name': its name in the files is unknown (column mapping)")
      else distinct(found).map(name -> _).left.map(keys => s"column '$name' is encrypted with different keys: $keys")
    }
    for {
      cols <- perColumn.collectFirst { case Left(why) => why }.toLeft(perColumn.collect { case Right((n, Some(k))) => n -> k })
      footer <- distinct(keys.flatMap { case (file, k) => k.footerKey.map(file -> _) })
        .left.map(keys => s"the files' footers are encrypted with different keys: $keys")
    } yield IndexKeys(cols.toMap, footer, keys.exists(_._2.footerEncrypted))
  }
}
