package hsbloom.indexing

import hsbloom.format.SourceFile

/** What to build: made by `hsbloom.operations.BuildData` (the tests' test kit makes it from JSON: jvm/testkit). */
final case class BuildRequest(
    /** The stored columns' keys (`BFIndexConfig.storedKeys`): value columns first, then substring filters. */
    columns: Seq[String],
    files: Seq[SourceFile],
    expectedNumItems: Option[Long],
    /** The file filters' false-positive probability (`BFIndexConfig.fileFpp`: they are probed once per file). */
    fileFpp: Double,
    /** The global filter's and the zones' false-positive probability (`BFIndexConfig.sharedFpp`: their false
     *  positives do not add up over files). */
    sharedFpp: Double,
    globalFilter: Boolean,
    /** Whether to build a filter per row group too (`BFIndexConfig.zones`; the source is Parquet, checked at
     *  create). */
    zones: Boolean,
    dataPath: String,
    description: String,
    maxBufferedHashes: Int = BuildRequest.DefaultMaxBufferedHashes,
    /** Per column, a fixed size (in 32-byte blocks) for the global filter, so a refresh can OR it with the
     *  previous version's filter of that size; columns not listed are sized from their distinct count. */
    globalFilterBlocks: Map[String, Int] = Map.empty,
    /** Hashes a global-filter task holds before it builds at the largest size and folds (a tuning knob). */
    globalHeldHashes: Long = BuildRequest.DefaultGlobalHeldHashes,
    /** How the rows of encrypted indexed columns are sealed (`hsbloom.index.SealedTable`); None: none is. */
    sealing: Option[EncryptedColumns.Sealing] = None,
    /**
     * Per stored column after the value columns: the source column, n of its substring filter (n-grams), and
     * whether of the lower-cased values.
     */
    grams: Seq[(String, Int, Boolean)] = Nil) {
  /** The value columns (each stored under its own name), the first of `columns`. */
  def valueColumns: Seq[String] = columns.take(columns.size - grams.size)

  /** The indexed columns whose rows go to the sealed table, not to the plaintext tables. */
  def sealedColumns: Set[String] = sealing.fold(Set.empty[String])(_.masterKeys.keySet)
}

object BuildRequest {
  /** Hashes one file's column may buffer before its filter is built at a fixed large size instead. */
  val DefaultMaxBufferedHashes: Int = 1 << 22
  /** Hashes a global-filter reducer holds before the filter's size is known (64 MiB); see GlobalReducer. */
  val DefaultGlobalHeldHashes: Long = 1L << 23
}
