package hsbloom.indexing

import org.scalatest.funsuite.AnyFunSuite

import hsbloom.format.SourceFile

class BuildSummarySuite extends AnyFunSuite {
  test("the summary is the JSON the index log records, with its field names and the request's column order") {
    val request = BuildRequest(Seq("b", "a"), Seq(SourceFile(0, "file:/x", 10, 1), SourceFile(1, "file:/y", 20, 2)),
      None, 0.01, 0.01, globalFilter = true, zones = false, "file:/d", "test")
    val stats = Seq(FileStats(0, "a", 5, 1, 3, 32), FileStats(1, "a", 7, 0, 7, 64), FileStats(0, "b", 5, 0, 5, 32),
      FileStats(1, "b", 7, 2, 3, 32))
    val adoption = Adoption.Outcome(Set(1L), Nil, Map("no native filter in every row group" -> 1))
    val summary = BuildSummary.of(request, stats, Map("a" -> ((9L, 1040L))), Map("b" -> 6L), indexBytes = 4096,
      adoption)
    assert(summary.toJson ==
      """{"num_files":2,"num_rows":12,"index_bytes":4096,"columns":{""" +
        // file_ndv_sum: the files' distinct values summed (b: 5 + 3; a: 3 + 7, its ndv the global filter's 9). b's
        // scan count (6) covers only the files scanned, and a file was adopted: its ndv is the files' sum.
        """"b":{"num_rows":12,"num_nulls":2,"ndv":8,"file_filter_bytes":64,"global_filter_bytes":0,""" +
        """"file_ndv_sum":8,"ndv_scope":"files"},""" +
        """"a":{"num_rows":12,"num_nulls":1,"ndv":9,"file_filter_bytes":96,"global_filter_bytes":1040,""" +
        """"file_ndv_sum":10,"ndv_scope":"column"}},""" +
        """"adoption":{"adopted_files":1,"hashed_files":{"no native filter in every row group":1}}}""")
  }

  test("without a global filter, the scan's distinct count is the column's when no file was adopted") {
    val request = BuildRequest(Seq("k"), Seq(SourceFile(0, "file:/x", 10, 1), SourceFile(1, "file:/y", 20, 2)),
      None, 0.01, 0.01, globalFilter = false, zones = false, "file:/d", "test")
    // The same 4 keys in both files: the files' counts sum to 8, the column holds 4.
    val stats = Seq(FileStats(0, "k", 4, 0, 4, 32), FileStats(1, "k", 4, 0, 4, 32))
    val hashedAll = Adoption.Outcome(Set.empty, Nil, Map("no native filter in every row group" -> 2))
    val column = BuildSummary.of(request, stats, Map.empty, Map("k" -> 4L), indexBytes = 64, hashedAll).columns.head._2
    assert((column.ndv, column.fileNdvSum, column.ndvOfColumn) == ((4L, 8L, true)))
    val log = BuildSummary.of(request, stats, Map.empty, Map("k" -> 4L), 64, hashedAll).logSummary(0.01, 0.01)
    assert(log.column("k").get.filesPerKey.contains(2.0))
  }
}
