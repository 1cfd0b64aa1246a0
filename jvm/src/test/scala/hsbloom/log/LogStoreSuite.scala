package hsbloom.log

import java.nio.file.Files
import java.util.concurrent.{CountDownLatch, Executors, TimeUnit}

import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

import hsbloom.format.Layout
import hsbloom.shim.CollectionConverters._

class LogStoreSuite extends AnyFunSuite {
  private val conf = new Configuration()

  test("of many threads racing to create the same entry, exactly one wins and its content is the entry") {
    val dir = Files.createTempDirectory("logstore-race")
    val threads = 16
    val pool = Executors.newFixedThreadPool(threads)
    try {
      for (round <- 0 until 50) {
        val path = dir.resolve(f"$round%020d.json").toUri.toString
        val start = new CountDownLatch(1)
        val results = (0 until threads).map { t =>
          pool.submit(() => {
            start.await()
            LogStore.createIfAbsent(path, s"""{"writer": $t, "padding": "${"x" * 4096}"}""", conf)
          })
        }
        start.countDown()
        val winners = results.zipWithIndex.collect { case (f, t) if f.get(60, TimeUnit.SECONDS) => t }
        assert(winners.size == 1, s"round $round: winners $winners")
        assert(LogStore.read(path, conf).startsWith(s"""{"writer": ${winners.head},"""))
      }
    } finally pool.shutdownNow()
    val leftovers = Files.list(dir).iterator().asScala.map(_.getFileName.toString).filter(_.startsWith(".")).toList
    assert(leftovers.isEmpty, "temporary files are removed")
    assert(LogStore.list(dir.toUri.toString, conf).length == 50)
  }

  test("an existing entry is never replaced") {
    val dir = Files.createTempDirectory("logstore-keep")
    val path = dir.resolve("00000000000000000000.json").toString
    assert(LogStore.createIfAbsent(path, "first", conf))
    assert(!LogStore.createIfAbsent(path, "second", conf))
    assert(LogStore.read(path, conf) == "first")
  }

  test("reading an absent entry gives null; listing an absent directory gives nothing; hidden names are skipped") {
    val dir = Files.createTempDirectory("logstore-absent")
    assert(LogStore.read(dir.resolve("nothing.json").toString, conf) == null)
    assert(LogStore.list(dir.resolve("missing").toString, conf).isEmpty)
    Files.writeString(dir.resolve(".00000000000000000001.json.tmp"), "partial")
    assert(LogStore.createIfAbsent(dir.resolve("00000000000000000000.json").toString, "{}", conf))
    assert(LogStore.list(dir.toString, conf).toSeq == Seq("00000000000000000000.json"))
  }

  test("missing parent directories are created") {
    val dir = Files.createTempDirectory("logstore-parents")
    val path = dir.resolve("a/b/_hsbloom_log/00000000000000000000.json").toString
    assert(LogStore.createIfAbsent(path, "{}", conf))
    assert(LogStore.read(path, conf) == "{}")
  }

  test("an entry larger than the bound is refused after reading one byte past it; entry names are ASCII digits") {
    val dir = Files.createTempDirectory("logstore-bound")
    val atBound = dir.resolve("00000000000000000000.json")
    Files.write(atBound, Array.fill(Layout.MaxLogEntryBytes.toInt)('x'.toByte))
    assert(LogStore.read(atBound.toUri.toString, conf).length == Layout.MaxLogEntryBytes)
    val over = dir.resolve("00000000000000000001.json")
    Files.write(over, Array.fill(Layout.MaxLogEntryBytes.toInt + 1)('x'.toByte))
    val e = intercept[LogEntryTooLargeException](LogStore.read(over.toUri.toString, conf))
    assert(e.getMessage.contains("00000000000000000001.json is larger than 8388608 bytes"))
    assert(LogStore.entryId("00000000000000000042.json").contains(42L))
    assert(LogStore.entryId("09223372036854775807.json").contains(Long.MaxValue))
    Seq("09223372036854775808.json", "\u0663.json", "-1.json", "1.json.tmp", ".1.json", "1e3.json")
      .foreach(n => assert(LogStore.entryId(n).isEmpty, n))
  }
}
