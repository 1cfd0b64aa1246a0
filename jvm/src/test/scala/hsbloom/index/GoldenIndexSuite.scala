package hsbloom.index

import java.nio.file.{Files, Path => JPath, Paths}

import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

import hsbloom.shim.CollectionConverters._

/**
 * The golden index directories of tests/golden (written by the jar through tests/golden/generate.py), loaded
 * with the jar's own loader (`IndexData.load`: file tables, row checksums, checksummed stripes of blocks/) and
 * probed with the hashes the jar computed for each case's literal: the files kept are the answers the Python
 * reader must give too (tests/test_golden_indexes.py), so a change of format fails both suites.
 */
class GoldenIndexSuite extends AnyFunSuite {
  private val golden: JPath = Paths.get(sys.env.getOrElse("HSBLOOM_GOLDEN", "../tests/golden")).toAbsolutePath
  private val mapper = new ObjectMapper()
  private val conf = new Configuration()

  private def cases: Seq[JPath] =
    Files.list(golden).iterator().asScala.filter(p => Files.exists(p.resolve("answers.json"))).toSeq.sortBy(_.toString)

  test("every kind of golden index is there") {
    assert(cases.map(_.getFileName.toString) ==
      Seq("damaged", "delta", "parquet_partitioned_zones", "parquet_substring", "parquet_types"))
  }

  cases.foreach { dir =>
    test(s"the jar's loader gives the recorded answers: ${dir.getFileName}") {
      val answers = mapper.readTree(dir.resolve("answers.json").toFile)
      val dataPath = "file:" + dir.resolve(answers.get("index").asText).resolve("v__=0").toString
      val data = IndexData.load(Seq(dataPath), Set.empty, conf, 1L << 20)
      val recorded = answers.get("files")
      val files = recorded.fieldNames.asScala.map(name => name -> recorded.get(name)).toSeq
      assert(data.numFiles == files.size)
      answers.get("cases").elements().asScala.foreach { c =>
        val kind = c.get("kind").asText
        val substring = kind == "contains" || kind == "like"
        // A substring condition reads its column's substring filter, under its stored key.
        val column = if (!substring) c.get("column").asText
          else hsbloom.BFIndexConfig.gramKey(c.get("column").asText, answers.get("ngram_size").asInt)
        val hashes = c.get("hashes").elements().asScala.map(_.asLong).toArray
        if (substring) {
          val text = c.get("value").get("value").asText
          val runs = if (kind == "contains") Seq(text) else hsbloom.substring.LikeRuns(text).get
          val n = answers.get("ngram_size").asInt
          val grams = runs.map(_.getBytes("UTF-8")).flatMap(b => (0 to b.length - n).map(hsbloom.sbbf.ParquetHash.hashBytes(b, _, n)))
          assert(grams == hashes.toSeq, s"$c")
        }
        val kept = files.filter { case (path, fingerprint) =>
          val slot = data.slotOf(new Path(path), fingerprint.get(0).asLong, fingerprint.get(1).asLong)
          assert(slot >= 0, s"$path is not held")
          val entry = data.entry(slot, column)
          if (kind == "eq") entry.forall(_.mightContainAny(hashes))
          else if (substring) hashes.forall(h => entry.forall(_.mightContainAny(Array(h))))
          else entry.forall(_.mayHoldNulls)
        }.map(_._1).sorted
        val expected = c.get("kept").elements().asScala.map(_.asText).toSeq.sorted
        assert(kept == expected, s"$c")
      }
    }
  }
}
