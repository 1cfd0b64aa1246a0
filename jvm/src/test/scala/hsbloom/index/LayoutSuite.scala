package hsbloom.index

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import org.scalatest.funsuite.AnyFunSuite

class LayoutSuite extends AnyFunSuite {
  test("json() carries every constant Python reads, with the values the index directories use") {
    val root = new ObjectMapper().readTree(Layout.json())
    assert(root.fieldNames.asScala.toSet == Set("default_system_dir", "log_dir", "log_entry_digits",
      "log_format_version", "version_prefix", "files_table", "global_table", "blocks_dir", "zones_table", "data_layout", "states",
      "stable_states"))
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
    assert(Layout.systemPath(None, "file:/w/spark-warehouse") == "file:/w/spark-warehouse/_hsbloom")
    assert(Layout.systemPath(None, "file:/w/spark-warehouse//") == "file:/w/spark-warehouse/_hsbloom")
    assert(Layout.systemPath(Some("hdfs:///shared/hsbloom/"), "file:/w") == "hdfs:///shared/hsbloom")
    assert(Layout.systemPath(Some("/"), "file:/w") == "/")
    assert(Layout.systemPath(Some("/idx"), "file:/w") == "/idx")
  }
}
