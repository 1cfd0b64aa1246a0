package hsbloom.index

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import org.scalatest.funsuite.AnyFunSuite

class LayoutSuite extends AnyFunSuite {
  test("json() carries every constant Python reads, with the values the index directories use") {
    val root = new ObjectMapper().readTree(Layout.json())
    assert(root.fieldNames.asScala.toSet == Set("default_system_dir", "log_dir", "log_entry_digits",
      "log_format_version", "version_prefix", "files_table", "global_table", "blocks_dir", "zones_table", "data_layout", "states",
      "stable_states", "max_data_version", "max_file_id", "max_data_parts", "max_log_entry_bytes", "source_formats"))
    assert(root.get("log_dir").asText == "_hsbloom_log")
    assert(root.get("version_prefix").asText == "v__=")
    assert(root.get("default_system_dir").asText == "_hsbloom")
    assert(Seq("files_table", "global_table", "blocks_dir").map(root.get(_).asText) == Seq("files", "global", "blocks"))
    assert(root.get("data_layout").asInt == Layout.DataLayout)
    assert(root.get("log_format_version").asInt == Layout.LogFormatVersion)
    val states = root.get("states").elements.asScala.map(_.asText).toSeq
    val stable = root.get("stable_states").elements.asScala.map(_.asText).toSet
    assert(states.size == 8 && states.toSet.size == 8 && stable == Set("ACTIVE", "DELETED", "DOESNOTEXIST"))
    assert(stable.subsetOf(states.toSet))
  }

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
