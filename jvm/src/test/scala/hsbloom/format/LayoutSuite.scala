package hsbloom.format

import org.scalatest.funsuite.AnyFunSuite

class LayoutSuite extends AnyFunSuite {
  test("the data directory of a version and the system path, normalized as both languages do") {
    assert(Layout.versionDir(7) == "v__=7")
    assert(Layout.versionDir(Layout.MaxDataVersion) == s"v__=${Int.MaxValue - 1}")
    Seq(-1L, Layout.MaxDataVersion + 1, Long.MaxValue).foreach { v =>
      intercept[IllegalArgumentException](Layout.versionDir(v)) // never a directory name
    }
    assert(Seq("v__=0", "v__=12", "v__=2147483646").map(Layout.versionOf) == Seq(Some(0L), Some(12L), Some(2147483646L)))
    assert(Seq("v__=-1", "v__=007", "v__=2147483647", "v__=1/..", "v__=\u0663", "v__=", "x__=1").forall(Layout.versionOf(_).isEmpty))
    assert(Layout.systemPath(None, "file:/w/spark-warehouse") == "file:/w/spark-warehouse/_hsbloom")
    assert(Layout.systemPath(None, "file:/w/spark-warehouse//") == "file:/w/spark-warehouse/_hsbloom")
    assert(Layout.systemPath(Some("hdfs:///shared/hsbloom/"), "file:/w") == "hdfs:///shared/hsbloom")
    assert(Layout.systemPath(Some("/"), "file:/w") == "/")
    assert(Layout.systemPath(Some("/idx"), "file:/w") == "/idx")
  }
}
