package hsbloom.rules

import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.execution.SparkPlan
import org.scalatest.funsuite.AnyFunSuite

import hsbloom.shim.FileRelation
import hsbloom.testing.{Indexes, Queries, SharedSession}

/**
 * What every hsbloom rule shares (`GuardedRule`: off unless its settings are on, a failure leaves the plan as it
 * was) and where the rules must not drop rows (`Nondeterminism`), on plans Spark makes of real queries.
 */
class RulesSuite extends AnyFunSuite with SharedSession with Indexes with Queries {
  private lazy val table: String = {
    val path = dir("t")
    spark.range(0, 100, 1, 4).selectExpr("id AS key", "id % 3 AS v").write.parquet(path)
    path
  }
  private def analyzed(sql: String): LogicalPlan = spark.sql(sql.replace("{t}", s"parquet.`$table`")).queryExecution.analyzed

  test("what makes an operator depend on more than its rows' values, as SQL") {
    def reason(sql: String): Option[String] = {
      val plan = analyzed(sql)
      plan.collectFirst(Function.unlift((p: LogicalPlan) => Nondeterminism.of(p)))
    }
    assert(reason("SELECT key, rand(5) AS r FROM {t}").contains("rand(5)"))
    assert(reason("SELECT key FROM {t} WHERE rand(7) < 0.5").contains("rand(7)"))
    assert(reason("SELECT key, monotonically_increasing_id() AS n FROM {t}").contains("monotonically_increasing_id()"))
    assert(reason("SELECT key FROM {t} TABLESAMPLE (50 PERCENT)").exists(_.startsWith("sample(0.0, 0.5, seed ")))
    // File-bound functions give each row the same value whichever other files are read: they do not stop pruning.
    assert(reason("SELECT key, input_file_name() AS f, input_file_block_start() AS s FROM {t}").isEmpty)
    assert(reason("SELECT key, v * 2 AS w FROM {t} WHERE key = 3").isEmpty)
  }

  test("the scans below a nondeterministic operator, logical and physical, and only those") {
    val plan = analyzed("SELECT key, rand(5) AS r FROM {t} WHERE key < 10 UNION ALL SELECT key, 0.0D AS r FROM {t}")
    val scans = Nondeterminism.logicalScans(plan)
    val relations = plan.collect { case r @ FileRelation(_, _, output, _) => (r, output) }
    assert(relations.size == 2)
    val reasons = relations.map { case (_, output) => Nondeterminism.reasonFor(scans, output) }
    assert(reasons.toSet == Set(Some("rand(5)"), None), reasons)
    val physical: SparkPlan = spark.sql(s"SELECT key, rand(5) AS r FROM parquet.`$table` WHERE key = 3").queryExecution.sparkPlan
    assert(Nondeterminism.physicalScans(physical).map(_._2) == Seq("rand(5)"))
    assert(Nondeterminism.notPruned("a scan", "rand(5)") == "a scan: below nondeterministic rand(5): not pruned")
  }

  test("a guarded rule runs only while on, and a failing rewrite leaves the plan as it was") {
    val plan = analyzed("SELECT key FROM {t} WHERE key = 3")
    var on = false
    var runs = 0
    val failing = new GuardedRule[LogicalPlan] {
      override protected def enabled: Boolean = on
      override protected def failing: String = "the test rule"
      override protected def rewritePlan(p: LogicalPlan): LogicalPlan = { runs += 1; throw new IllegalStateException("boom") }
    }
    assert(failing(plan) eq plan) // off: not run
    assert(runs == 0)
    on = true
    assert(failing(plan) eq plan) // on: run, failed, the plan unchanged
    assert(runs == 1)
    val rewriting = new GuardedRule[LogicalPlan] {
      override protected def enabled: Boolean = true
      override protected def failing: String = "the test rule"
      override protected def rewritePlan(p: LogicalPlan): LogicalPlan = p.children.head
    }
    assert(rewriting(plan) eq plan.children.head)
  }

  test("hsbloom's rules, on, change no answer of a query whose scans they cannot prune") {
    create(spark.read.parquet(table), "t_key", Seq("key"))
    val queries = Seq("SELECT key, rand(5) AS r FROM {t} WHERE key IN (3, 70)", "SELECT key FROM {t} TABLESAMPLE (50 PERCENT) " +
      "REPEATABLE (3) WHERE key < 40", "SELECT key, monotonically_increasing_id() AS n FROM {t} WHERE key = 70")
    queries.foreach { q =>
      val sql = q.replace("{t}", s"parquet.`$table`")
      val off = sortedRows(spark.sql(sql))
      withHsbloom {
        assert(sortedRows(spark.sql(sql)) == off && off.nonEmpty, q)
        assert(filesRead(spark.sql(sql)) == 4, q)
      }
    }
    assert(withHsbloom(filesRead(spark.sql(s"SELECT key FROM parquet.`$table` WHERE key = 70"))) == 1)
  }
}
