package hsbloom.substring

import java.util.Locale

import scala.util.Random

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, Upper}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.StringType
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

import hsbloom.shim.CaseMappings

/**
 * `UpperRuns`: exact stretches, and the claim it rests on, checked over characters whose case mapping expands,
 * shrinks or depends on the locale: every stretch it gives of a substring of any upper-case form of a value is in
 * every lower-case form of that value.
 */
class UpperRunsSuite extends AnyFunSuite {
  private def lowered(s: String): Seq[String] =
    UpperRuns.lowered(s.getBytes("UTF-8")).map(new String(_, "UTF-8"))

  test("the stretches of an upper-case run that every lower-case form holds, lower-cased") {
    assert(lowered("ERR_QUOTA-42") == Seq("err_quo", "-42"))
    assert(lowered("SS") == Nil && lowered("FI") == Nil && lowered("abc") == Nil)
    assert(lowered("\u00c9COLE 9") == Seq("co", "e 9")) // É is not ASCII, L may be from another character
    assert(lowered("BCDEGKMOPQRUVXZ0129 !%_") == Seq("bcdegkmopqruvxz0129 !%_"))
    assert(lowered("") == Nil)
  }

  /** Spark's `Upper` with ICU case mapping on and off (on 3.5, both the JVM's), and the JVM's in three locales. */
  private val uppers: Seq[String => String] = {
    val spark = Seq(true, false).map { icu =>
      val conf = new SQLConf
      conf.setConfString(CaseMappings.IcuSetting, icu.toString)
      SQLConf.withExistingConf(conf) {
        val upper = Upper(BoundReference(0, StringType, nullable = true))
        upper.eval(InternalRow(UTF8String.fromString("\u00e9")))
        upper
      }
    }
    spark.map(u => (s: String) => u.eval(InternalRow(UTF8String.fromString(s))).toString) ++
      Seq(Locale.ROOT, Locale.forLanguageTag("tr"), Locale.forLanguageTag("lt")).map(l => (s: String) => s.toUpperCase(l))
  }

  test("every stretch of an upper-case form's substring is in every lower-case form of the value") {
    val pieces = Seq("a", "b", "s", "i", "k", "f", "l", "t", "n", "\u00df", "\ufb01", "\ufb00", "\ufb06", "\u0131",
      "\u017f", "\u0130", "\u212a", "\u0149", "\u01f0", "\u1e96", "\u03c3", "\u03a3", "\u03c2", "\u00e9", "e\u0301",
      "i\u0307", "J", "I", "\u0345", "0", "-", " ", "\ud83d\ude00", "x", "Q", "\u1e9e", "\u0587")
    val mappings = new CaseMappings
    val rnd = new Random(54)
    var checked = 0
    (0 until 3000).foreach { _ =>
      val value = Seq.fill(1 + rnd.nextInt(8))(pieces(rnd.nextInt(pieces.size))).mkString
      val lowers = mappings.lowerForms(UTF8String.fromString(value)).map(_.toString) :+ value.toLowerCase(Locale.ROOT)
      uppers.map(_(value)).distinct.foreach { upper =>
        // Substrings between characters (a cut inside a surrogate pair is no string Spark compares).
        def between(i: Int): Boolean = i == 0 || i == upper.length || !Character.isLowSurrogate(upper.charAt(i))
        for (from <- 0 to upper.length if between(from); to <- from to upper.length if between(to)) {
          lowered(upper.substring(from, to)).foreach { stretch =>
            lowers.foreach(l => assert(l.contains(stretch), s"'$stretch' of upper '$upper' is not in '$l' ('$value')"))
            checked += 1
          }
        }
      }
    }
    assert(checked > 10000, checked)
  }
}
