package hsbloom.sql

/**
 * hsbloom's SQL statements: the keywords that make a statement hsbloom's (`claim`, alternatives separated by
 * '|'), and the statement's form, shown in every syntax error of it and in docs/sql.md.
 *
 * A claim is as short as it can be without taking a statement Spark or Delta could mean: `DROP BLOOMFILTER` is
 * claimed at its second word, since no other statement starts so; `DESCRIBE BLOOMFILTER` could describe a table
 * named bloomfilter, and `VACUUM` and `RESTORE` name a Delta table there, so those three are claimed only
 * with INDEX after it.
 */
private[sql] sealed abstract class Statement(val claim: String, val form: String)

private[sql] object Statement {
  val TravelForm = "[VERSION AS OF n | TIMESTAMP AS OF 'timestamp']"

  case object Create extends Statement("CREATE BLOOMFILTER",
    s"CREATE BLOOMFILTER INDEX [IF NOT EXISTS] name ON table $TravelForm (column, ...) [OPTIONS (key = value, ...)]")
  case object Refresh extends Statement("REFRESH BLOOMFILTER",
    "REFRESH BLOOMFILTER INDEX name [FULL | INCREMENTAL | QUICK]")
  case object Drop extends Statement("DROP BLOOMFILTER", "DROP BLOOMFILTER INDEX [IF EXISTS] name [FORCE]")
  case object Restore extends Statement("RESTORE BLOOMFILTER INDEX", "RESTORE BLOOMFILTER INDEX name")
  case object Vacuum extends Statement("VACUUM BLOOMFILTER INDEX", "VACUUM BLOOMFILTER INDEX name")
  case object Cancel extends Statement("CANCEL BLOOMFILTER", "CANCEL BLOOMFILTER INDEX name")
  case object Show extends Statement("SHOW BLOOMFILTER", s"SHOW BLOOMFILTER INDEXES [ON table $TravelForm]")
  case object Describe extends Statement("DESCRIBE|DESC BLOOMFILTER INDEX", "DESCRIBE BLOOMFILTER INDEX name")
  case object Verify extends Statement("VERIFY BLOOMFILTER", "VERIFY BLOOMFILTER INDEX name")
  case object Files extends Statement("SHOW FILES IN BLOOMFILTER", "SHOW FILES IN BLOOMFILTER INDEX name")
  case object Explain extends Statement("EXPLAIN BLOOMFILTER",
    "EXPLAIN BLOOMFILTER query | EXPLAIN BLOOMFILTER ANALYZE statement")

  val all: Seq[Statement] = Seq(Create, Refresh, Drop, Restore, Vacuum, Cancel, Show, Describe, Verify, Files, Explain)
}
