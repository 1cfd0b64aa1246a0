package hsbloom.substring

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Paths}

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import org.scalatest.funsuite.AnyFunSuite

import hsbloom.shim.CollectionConverters._

/**
 * The cross-language vectors (tests/vectors/substring_vectors.json): the jar reads each pattern into the runs, and
 * each value into the gram hashes, that the readers' tests check against the same file.
 */
class SubstringVectorsSuite extends AnyFunSuite {
  private val root: JsonNode = {
    val path = Paths.get(sys.env.getOrElse("HSBLOOM_VECTORS", "../tests/vectors")).resolve("substring_vectors.json")
    new ObjectMapper().readTree(Files.readAllBytes(path))
  }

  private def entries(key: String): Seq[JsonNode] = root.get(key).elements().asScala.toSeq

  private def strings(node: JsonNode): Seq[String] = node.elements().asScala.map(_.asText).toSeq

  private def unhex(s: String): Array[Byte] = s.grouped(2).map(Integer.parseInt(_, 16).toByte).toArray

  private def hex(h: Long): String = f"$h%016x"

  test("each pattern is read into the runs of the vectors") {
    val cases = entries("runs")
    assert(cases.size >= 15)
    cases.foreach { c =>
      val expected = if (c.get("runs").isNull) None else Some(strings(c.get("runs")))
      val pattern = c.get("pattern").asText
      assert(LikeRuns(pattern, c.get("escape").asText.charAt(0)) == expected, pattern)
    }
  }

  test("each value has the gram hashes of the vectors, and runs require the grams of the vectors") {
    entries("grams").foreach { c =>
      val value = c.get("value")
      val bytes = if (value.has("hex")) unhex(value.get("hex").asText) else value.get("utf8").asText.getBytes(UTF_8)
      val n = c.get("n").asInt
      val out = new Array[Long](Grams.count(bytes.length, n))
      assert(Grams.hashes(bytes, 0, bytes.length, n, out) == out.length)
      assert(out.map(hex).toSeq == strings(c.get("grams")), c)
    }
    entries("required").foreach { c =>
      val expected = if (c.get("grams").isNull) None else Some(strings(c.get("grams")))
      assert(Grams.required(strings(c.get("runs")), c.get("n").asInt).map(_.toSeq.map(hex).sorted) == expected, c)
    }
  }
}
