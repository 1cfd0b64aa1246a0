package hsbloom.pruning

import org.apache.spark.sql.DataFrame
import org.scalatest.funsuite.AnyFunSuite

import hsbloom.BFIndexConfig
import hsbloom.indexing.GramDensity
import hsbloom.testing.{Indexes, Queries, SharedSession}

/**
 * How a substring filter's n is chosen and when it pays (docs/substring.md#choosing-n): create measures how much
 * the files share each n's grams and takes the smallest n that discriminates; of a filter whose grams fill every
 * file `hs.explain` says so; answers stay those of hsbloom off either way.
 */
class SubstringSizingSuite extends AnyFunSuite with SharedSession with Indexes with Queries {
  /**
   * 8 files of 2,000 rows: `hex`, 32 hex digits of a hash of the id (every file holds all 4,096 hex 3-grams), and
   * `word`, one of six short words (every file holds all of their grams, at any n).
   */
  private lazy val table: DataFrame = {
    val path = dir("sizing")
    spark.range(0, 16000, 1, 8).selectExpr("id", "substr(sha2(cast(id as string), 256), 1, 32) as hex",
      "element_at(array('alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta'), cast(id % 6 + 1 as int)) as word")
      .write.parquet(path)
    spark.read.parquet(path)
  }

  private def hexOf(id: Long): String = table.where(s"id = $id").select("hex").head().getString(0)

  /** Needles of row ids' hex values, common words, and short patterns. */
  private def conditions: Seq[String] =
    Seq(7L, 4321L, 15999L).flatMap { id =>
      val h = hexOf(id)
      Seq(s"hex LIKE '%${h.substring(5, 17)}%'", s"startswith(hex, '${h.take(9)}')", s"endswith(hex, '${h.takeRight(7)}')")
    } ++ Seq("contains(word, 'lph')", "word LIKE '%psilo%'", "hex LIKE '%ab%'", "contains(hex, 'zzzzzz')",
      "(contains(hex, 'abcdef') AND word = 'beta') OR id = 5")

  test("the sharing of grams: 0 when no gram is in two files, 1 when every file holds every gram") {
    assert(GramDensity.Counts(Seq(10, 10), 10).shared.contains(1.0))
    assert(GramDensity.Counts(Seq(10, 10, 10), 30).shared.contains(0.0))
    assert(GramDensity.Counts(Seq(10, 10, 10, 0), 15).shared.contains(0.5)) // of the three files with grams
    assert(GramDensity.Counts(Seq(10), 10).shared.isEmpty && GramDensity.Counts(Seq(0, 0), 0).shared.isEmpty)
    // From a build's summary: 8 files each holding the column's 100 grams, or an eighth of its 800.
    val full = hsbloom.format.ColumnSummary(10, 0, 100, 64, 0, Some(800L), Some(true))
    assert(full.sharing(8).contains(1.0) && full.filledAdvice("ngram3(c)", 8).exists(_.startsWith(
      "ngram3(c): its files share 100% of their grams (measured at build)")))
    val apart = hsbloom.format.ColumnSummary(10, 0, 800, 64, 0, Some(800L), Some(true))
    assert(apart.sharing(8).contains(0.0) && apart.filledAdvice("ngram3(c)", 8).isEmpty)
    assert(full.copy(ndvOfColumn = Some(false)).sharing(8).isEmpty) // a sum of the files' counts proves nothing
  }

  test("without ngram_size each column gets the smallest n its files do not share; needles read their file") {
    hs.createIndex(table, BFIndexConfig("sized", Seq("id"), substringColumns = Seq("hex", "word")))
    val sizes = hs.index("sized").config.ngramSizes
    // hex: 3- and 4-grams are in (nearly) every file, 5-grams of 2,000 hashes are not; word: no n discriminates.
    assert(sizes == Map("hex" -> 5, "word" -> BFIndexConfig.DefaultNgramSize), sizes)
    sameAnswers(table, conditions)
    withHsbloom {
      Seq(7L, 4321L).foreach(id => assert(filesRead(table.where(s"contains(hex, '${hexOf(id).substring(3, 15)}')")) == 1))
    }
    hs.deleteIndex("sized")
  }

  test("with granularity row_group a needle reads the one row group of its file that holds it") {
    val path = dir("zoned")
    // Row groups of about 16 KB: 5 or so per file of 2,000 rows.
    table.write.option("parquet.block.size", 16384).parquet(path)
    val zoned = spark.read.parquet(path)
    hs.createIndex(zoned, BFIndexConfig("zoned", Seq("id"), substringColumns = Seq("hex"),
      ngramSizes = Map("hex" -> 5), substringCaseInsensitive = true, granularity = "row_group"))
    sameAnswers(zoned, conditions :+ s"hex ILIKE '%${hexOf(99).substring(2, 14).toUpperCase}%'")
    withHsbloom {
      Seq(s"contains(hex, '${hexOf(4321).substring(3, 15)}')", s"hex ILIKE '%${hexOf(7).substring(3, 15).toUpperCase}%'")
        .foreach { p =>
          val plan = executed(zoned.where(p))
          val before = hsbloom.explain.PruningExplain.rowGroupsBeforePruning(plan)
          val pruned = hsbloom.explain.PruningExplain.rowGroupsPruned(plan)
          assert(hsbloom.explain.PruningExplain.filesRead(plan) == 1, p)
          assert(before.exists(_ > 2) && before.zip(pruned).exists { case (b, k) => b - k == 1 }, s"$p: $before $pruned")
        }
    }
    hs.deleteIndex("zoned")
  }

  test("a filter whose grams fill every file is explained as such and keeps the same rows") {
    hs.createIndex(table, BFIndexConfig("filled", Seq("id"), substringColumns = Seq("hex", "word"),
      ngramSizes = Map("hex" -> 3, "word" -> 3)))
    val explained = explainText(table.where(s"contains(hex, '${hexOf(7).substring(3, 15)}')"))
    assertContains(explained, "ngram3(hex): its files share 100% of their grams (measured at build), so it rules a " +
      "file out only for grams rare in the column")
    assertContains(explainText(table.where("contains(word, 'lph')")), "ngram3(word): its files share 100%")
    sameAnswers(table, conditions)
    withHsbloom(assert(filesRead(table.where(s"contains(hex, '${hexOf(7).substring(3, 15)}')")) == 8))
    hs.deleteIndex("filled")
  }
}
