package hsbloom.format

/**
 * What an index is built from, as its log records it: the format, where, how it is read, and what besides the
 * files decides the values read. Never a file list: the files a version holds are listed by its data (since data
 * layout 4; `legacyFiles` holds the list entries of older layouts carried).
 */
final case class IndexSource(
    /** parquet, orc, csv, json or delta (`Layout.SourceFormats`). */
    format: String,
    rootPaths: Seq[String],
    /** The read options: the value-deciding ones verbatim, others as salted HMACs, secrets never (`ReadOptions`). */
    options: ReadOptions.Recorded,
    /** The catalog table's name, when read as a table. */
    table: Option[String],
    /** The Delta snapshot version read. */
    deltaVersion: Option[Long],
    /** Column name and Spark type (`simpleString`), in the DataFrame's order. */
    schema: Seq[(String, String)],
    partitionColumns: Seq[String],
    /** What besides the files decides the values read: a scan is covered only when it reads with the same facts. */
    readFacts: ReadFacts.Facts,
    /** The schema given to the reader, as JSON, which a refresh must read with too. */
    userSchema: Option[String],
    /** The files an entry of data layout 3 or older listed (with their ids); empty since layout 4. */
    legacyFiles: Seq[SourceFile] = Nil,
    /**
     * The source's files have encrypted footers, which hide its schema from readers without keys: `schema` keeps
     * only the indexed columns (`hidingSchema`; docs/design/encryption.md#the-log-of-an-encrypted-footer-source).
     */
    schemaHidden: Boolean = false) {

  /** This source as the log of an index over encrypted footers records it: of the schema, `indexed` only. */
  def hidingSchema(indexed: Seq[String]): IndexSource =
    copy(schema = schema.filter { case (name, _) => indexed.contains(name) }, schemaHidden = true)

  def schemaOf(column: String): Option[String] = schema.collectFirst { case (`column`, t) => t }

  /** A one-line description for listings, e.g. "delta default.events @ version 3". */
  def describe: String =
    s"$format ${table.getOrElse(rootPaths.mkString(", "))}${deltaVersion.map(v => s" @ version $v").getOrElse("")}"

  /** Why `current` is not read the way this source was indexed (the first read fact that differs), or None. */
  def readFactsDifference(current: IndexSource): Option[String] =
    (readFacts.keySet ++ current.readFacts.keySet).toSeq.sorted.collectFirst {
      case key if readFacts.get(key) != current.readFacts.get(key) =>
        def shown(v: Option[String]) = v.map(x => s"'$x'").getOrElse("None")
        s"$key was ${shown(readFacts.get(key))} when the index was built and is ${shown(current.readFacts.get(key))} now"
    }
}
