package hsbloom

import org.scalatest.funsuite.AnyFunSuite

/**
 * The rules of an index config, where they live: every value `BFIndexConfig` refuses, with a message naming the
 * problem and what is allowed, and the default false-positive rate. Python's `hsbloom.BFIndexConfig` checks only
 * its arguments' types and sends the values here (tests/test_config.py shows one refusal arriving there).
 */
class BFIndexConfigSuite extends AnyFunSuite {

  private def refusal(config: => BFIndexConfig): String = {
    val e = intercept[HsbloomException](config)
    assert(e.condition == HsbloomException.InvalidConfig && e.getSqlState == "22023", e.getMessage)
    e.text
  }

  test("the defaults; the columns as given") {
    val config = BFIndexConfig("events_ids", Seq("user_id", "trace_id"))
    assert(config.indexedColumns == Seq("user_id", "trace_id"))
    assert((config.expectedNumItems, config.fpp, config.globalFilter, config.granularity) ==
      ((None, None, false, "file")))
    assert(!config.zones && BFIndexConfig("z", Seq("x"), granularity = "row_group").zones)
  }

  test("an index name it refuses is refused with the reason, and the names that are allowed") {
    val refused = Seq(
      "" -> "index_name must not be empty",
      "a/b" -> "index_name 'a/b' contains a path separator ('/' or '\\')",
      "a\\b" -> "index_name 'a\\b' contains a path separator",
      ".." -> "index_name '..' contains '..'",
      "a..b" -> "contains '..'",
      "a\nb" -> "index_name 'a\\u000Ab' contains control characters \\u000A",
      "a\u0000b\u0000" -> "contains control characters \\u0000",
      "a\u007fb" -> "contains control characters \\u007F",
      "a\u0085b" -> "contains control characters \\u0085",
      ".hidden" -> "index_name '.hidden' starts with '.', which would make its directory hidden",
      "a b" -> "index_name 'a b' contains ' '",
      "x:y" -> "contains ':'",
      "a`b;c" -> "contains ';', '`'",
      "\u00e9" -> "index_name '\u00e9' contains '\u00e9'",
      "n" * 129 -> "index_name is 129 characters long; at most 128 are allowed",
      (null: String) -> "index_name must be a string, got null")
    for ((name, reason) <- refused) {
      val message = refusal(BFIndexConfig(name, Seq("x")))
      assert(message.contains(reason), s"$name: $message")
      assert(message.endsWith("; an index name is 1 to 128 letters A-Z a-z, digits, '_', '-' and '.', not starting " +
        "with '.' and without '..'"), message)
      assert(!message.exists(c => c < 32), s"one line: $message")
    }
  }

  test("the names it keeps, the longest among them") {
    for (name <- Seq("a-b.c_1", "2024_events", "n" * 128, "A.b-C")) {
      assert(BFIndexConfig(name, Seq("x")).indexName == name)
    }
  }

  test("the columns: at least one, none empty, none twice") {
    assert(refusal(BFIndexConfig("idx", Nil)) == "indexed_columns must name at least one column")
    assert(refusal(BFIndexConfig("idx", Seq("a", ""))) == "indexed_columns must hold non-empty strings, got ''")
    assert(refusal(BFIndexConfig("idx", Seq("a", null))).startsWith("indexed_columns must hold non-empty strings"))
    assert(refusal(BFIndexConfig("idx", Seq("a", "b", "a", "b"))) == "indexed_columns lists [a, b] more than once")
  }

  test("fpp is strictly between 0 and 1, and a number") {
    for (p <- Seq(0.0, -0.0, 1.0, -0.1, 1.5, Double.NaN, Double.PositiveInfinity, Double.NegativeInfinity)) {
      assert(refusal(BFIndexConfig("idx", Seq("x"), fpp = Some(p))) == s"fpp must be strictly between 0 and 1, got $p")
    }
    for (p <- Seq(Double.MinPositiveValue, 1e-9, 0.5, 1 - 1e-16)) {
      assert(BFIndexConfig("idx", Seq("x"), fpp = Some(p)).fpp.contains(p))
    }
  }

  test("expected_num_items is positive") {
    assert(refusal(BFIndexConfig("idx", Seq("x"), expectedNumItems = Some(0L))) == "expected_num_items must be positive, got 0")
    assert(refusal(BFIndexConfig("idx", Seq("x"), expectedNumItems = Some(-5L))).contains("must be positive, got -5"))
    assert(BFIndexConfig("idx", Seq("x"), expectedNumItems = Some(Long.MaxValue)).expectedNumItems.contains(Long.MaxValue))
  }

  test("the granularity is 'file' or 'row_group'") {
    assert(refusal(BFIndexConfig("idx", Seq("x"), granularity = "rows")) ==
      "granularity must be one of 'file', 'row_group', got 'rows'")
    assert(BFIndexConfig("idx", Seq("x"), granularity = "row_group").granularity == "row_group")
  }

  test("the default fpp keeps the false-positive files of one probed value at one in twenty") {
    val default = BFIndexConfig("idx", Seq("x"))
    // min(0.01, 0.05 / files): files x fpp, the expected false-positive files of one probed value, is 0.05 from 5
    // files on (fewer files: the 0.01 of the filters' usual default).
    assert(Seq(0L, 1L, 5L).map(default.fileFpp) == Seq(0.01, 0.01, 0.01))
    for (files <- Seq(6L, 200L, 10000L, 1000000L)) {
      assert(math.abs(default.fileFpp(files) * files - 0.05) < 1e-12, files)
    }
    assert(default.sharedFpp == 0.01)
    val fixed = BFIndexConfig("idx", Seq("x"), fpp = Some(0.02))
    assert(fixed.fileFpp(10000L) == 0.02 && fixed.sharedFpp == 0.02)
  }
}
