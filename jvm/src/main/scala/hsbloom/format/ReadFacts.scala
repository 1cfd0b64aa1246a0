package hsbloom.format

/**
 * Everything besides the files themselves that decides which values a scan
 * produces for an indexed column (docs/design/read-facts.md lists each with
 * its reason). The index records these facts when it is built; a relation is
 * covered only when the facts Spark would read it with now are the same, so a
 * filter is never probed with values that were hashed from other bytes.
 *
 * A fact is a (key, value) string pair, so the log stores it as data and a
 * difference can be named to the user. The keys present depend on the format
 * and the indexed types: a setting that cannot change an indexed column's
 * values is not recorded, so changing it does not stop pruning.
 */
object ReadFacts {
  type Facts = Map[String, String]

  /** What a fact's value is when the thing it describes is not there (a column the relation lacks). */
  val Absent = "(absent)"

  /**
   * As `difference`, for a relation that lacks some indexed columns while the index recorded them: Delta's
   * DML commands scan their target through a relation without the columns they do not need. Those columns
   * are not probed, so their own facts, and the settings that only their types make recorded, are not
   * compared; every fact of the columns the relation has still is, and any fact it has that the index lacks.
   */
  def differenceWhereRead(recorded: Facts, current: Facts): Option[String] = {
    val lacking = current.collect { case (key, Absent) if key.startsWith("column.") => key }.toSet
    if (lacking.isEmpty) return difference(recorded, current)
    val comparable = recorded.filter { case (key, _) =>
      !lacking.contains(key) && (key.startsWith("column.") || current.contains(key))
    }
    difference(comparable, current -- lacking)
  }

  /**
   * Why a relation with facts `current` is not read as the index recorded (`recorded`), naming the first
   * fact that differs; None when they are the same.
   */
  def difference(recorded: Facts, current: Facts): Option[String] = {
    (recorded.keySet ++ current.keySet).toSeq.sorted.collectFirst {
      case key if recorded.get(key) != current.get(key) =>
        def shown(v: Option[String]) = v.map(x => s"'$x'").getOrElse("(not recorded)")
        s"$key differs: the index was built with ${shown(recorded.get(key))}, this scan reads with " +
          shown(current.get(key))
    }
  }
}
