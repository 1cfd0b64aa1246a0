package hsbloom.dml

import org.apache.spark.sql.catalyst.expressions.{Alias, AttributeReference, EqualTo, InputFileName, IsNotNull, Literal, MonotonicallyIncreasingID, Rand}
import org.apache.spark.sql.catalyst.plans.{FullOuter, Inner, LeftAnti, LeftOuter, LeftSemi, RightOuter}
import org.apache.spark.sql.catalyst.plans.logical.{Filter, LocalRelation, Project}
import org.apache.spark.sql.types.LongType
import org.scalatest.funsuite.AnyFunSuite

/** Where the MERGE target rule may drop target rows, and through which operators. */
class MergeTargetRuleSuite extends AnyFunSuite {
  import MergeTargetRule._

  test("target rows are dropped only on a side whose unmatched rows the join drops") {
    // Delta's joins: source LEFT, target RIGHT (findTouchedFiles inner / right outer, insert-only left anti).
    assert(targetRowsDroppable(Inner, targetIsLeft = false))
    assert(targetRowsDroppable(LeftAnti, targetIsLeft = false))
    assert(targetRowsDroppable(LeftSemi, targetIsLeft = false))
    assert(targetRowsDroppable(LeftOuter, targetIsLeft = false))
    assert(!targetRowsDroppable(RightOuter, targetIsLeft = false)) // NOT MATCHED BY SOURCE keeps every target row
    assert(!targetRowsDroppable(FullOuter, targetIsLeft = false))
    assert(!targetRowsDroppable(LeftAnti, targetIsLeft = true))
    assert(!targetRowsDroppable(LeftOuter, targetIsLeft = true))
    assert(targetRowsDroppable(RightOuter, targetIsLeft = true))
  }

  private val id = AttributeReference("id", LongType)()
  private val relation = LocalRelation(id)

  test("the target may be read through Delta's row id and input file, not through a counter or rand()") {
    val bookkeeping = Project(Seq(id, Alias(MonotonicallyIncreasingID(), "row_id")(),
      Alias(InputFileName(), "file")()), relation)
    assert(readsStoredRows(Filter(IsNotNull(id), bookkeeping), relation))
    assert(!readsStoredRows(Project(Seq(id, Alias(Rand(Literal(1L)), "r")()), relation), relation))
    assert(!readsStoredRows(Filter(EqualTo(Rand(Literal(1L)), Literal(0.5)), relation), relation))
    assert(!readsStoredRows(bookkeeping, LocalRelation(id)), "another relation")
  }
}
