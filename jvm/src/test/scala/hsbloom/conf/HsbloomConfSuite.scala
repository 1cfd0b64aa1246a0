package hsbloom.conf

import com.fasterxml.jackson.databind.ObjectMapper
import org.scalatest.funsuite.AnyFunSuite

import hsbloom.shim.CollectionConverters._

class HsbloomConfSuite extends AnyFunSuite {
  test("json() lists every setting once, in one key style, each with a type, default and doc") {
    val entries = new ObjectMapper().readTree(HsbloomConf.json()).elements.asScala.toSeq
    val keys = entries.map(_.get("key").asText)
    assert(keys == HsbloomConf.all.map(_.key) && keys.distinct == keys)
    keys.foreach(k => assert(k.matches("""spark\.hsbloom(\.[a-z][A-Za-z]*)+""") && !k.contains("_"), k))
    entries.foreach { e =>
      Seq("type", "default", "doc").foreach(f => assert(e.get(f).asText.trim.nonEmpty, s"${e.get("key")} $f"))
    }
    assert(entries.find(_.get("key").asText == "spark.hsbloom.cache.maxBytes").get.get("default").asText == "268435456")
  }

  test("a value is read trimmed; unset or blank reads as the default") {
    def lookup(value: Option[String]): String => Option[String] = _ => value
    assert(HsbloomConf.CacheMaxBytes.from(lookup(None)) == 256L * 1024 * 1024)
    assert(HsbloomConf.CacheMaxBytes.from(lookup(Some("  "))) == 256L * 1024 * 1024)
    assert(HsbloomConf.CacheMaxBytes.from(lookup(Some(" 1024 "))) == 1024L)
    assert(HsbloomConf.JoinPruningMaxBuildKeys.from(lookup(Some("7"))) == 7)
    intercept[IllegalArgumentException](HsbloomConf.JoinPruningMaxBuildKeys.from(lookup(Some("-1"))))
    assert(HsbloomConf.SystemPath.from(lookup(None)).isEmpty)
    assert(HsbloomConf.SystemPath.from(lookup(Some("/idx"))).contains("/idx"))
    intercept[IllegalArgumentException](HsbloomConf.JoinEnabled.from(lookup(Some("yes"))))
  }

  test("an internal setting is marked, keyed under spark.hsbloom.internal, and checks its range") {
    HsbloomConf.all.foreach(s => assert(s.internal == s.key.startsWith("spark.hsbloom.internal."), s.key))
    val entries = new ObjectMapper().readTree(HsbloomConf.json()).elements.asScala.toSeq
    assert(entries.filter(_.get("internal").asBoolean).map(_.get("key").asText) ==
      Seq(HsbloomConf.RefreshMaxReferredParts.key))
    def parts(value: String): Int = HsbloomConf.RefreshMaxReferredParts.from(_ => Some(value))
    assert(HsbloomConf.RefreshMaxReferredParts.from(_ => None) == 8 && parts("1") == 1)
    Seq("0", "9").foreach(v => intercept[IllegalArgumentException](parts(v)))
  }

  test("spark.hsbloom.enabled is on only for true, in any case; anything else is off") {
    def enabled(v: String): Boolean = HsbloomConf.Enabled.from(_ => Some(v))
    assert(enabled("true") && enabled(" TRUE "))
    assert(!enabled("false") && !enabled("yes") && !enabled("1"))
    assert(!HsbloomConf.Enabled.from(_ => None))
  }

  test("the defaults the defaultText shows are the defaults used") {
    HsbloomConf.all.filterNot(_ eq HsbloomConf.SystemPath).foreach { s =>
      assert(s.default.toString == s.defaultText, s.key)
    }
  }
}
