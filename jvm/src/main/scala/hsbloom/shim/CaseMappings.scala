package hsbloom.shim

import java.util.Locale

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, Lower}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.StringType
import org.apache.spark.unsafe.types.UTF8String

/**
 * Every lower-case form Spark's `Lower` may give a string, whatever the session that queries: the case mappings of
 * Spark 4's ICU (`spark.sql.icu.caseMappings.enabled`, read once per expression) and of the JVM (whose
 * `String.toLowerCase` follows the default locale, which maps differently only for Turkish, Azerbaijani and
 * Lithuanian). A substring filter of lower-cased values holds the grams of each form, so `ILIKE` finds what it
 * needs whichever mapping a query's `Lower` uses (docs/design/substring.md).
 */
final class CaseMappings {
  /** Spark's own `Lower`, one with each ICU setting (on 3.5, which has no ICU mapping, both are the JVM's). */
  private val sparkLowers: Seq[Lower] = Seq(true, false).map { icu =>
    val conf = new SQLConf // a task's own conf is read-only; `Lower` reads only this setting of it
    conf.setConfString(CaseMappings.IcuSetting, icu.toString)
    SQLConf.withExistingConf(conf) {
      val lower = Lower(BoundReference(0, StringType, nullable = true))
      lower.eval(InternalRow(UTF8String.fromString("\u00c9"))) // fixes its setting now, under `conf`
      lower
    }
  }
  private val row = new org.apache.spark.sql.catalyst.expressions.GenericInternalRow(1)

  /** The distinct lower-case forms of `value`, a string that is not all ASCII (ASCII maps one way only). */
  def lowerForms(value: UTF8String): Seq[UTF8String] = {
    row.update(0, value)
    val text = value.toString
    (sparkLowers.map(_.eval(row).asInstanceOf[UTF8String]) ++
      CaseMappings.Locales.map(l => UTF8String.fromString(text.toLowerCase(l)))).distinct
  }
}

object CaseMappings {
  val IcuSetting = "spark.sql.icu.caseMappings.enabled"
  /** The JVM's lower-case mappings: the default one, and the locales it maps otherwise. */
  private val Locales: Seq[Locale] = Seq(Locale.ROOT, Locale.forLanguageTag("tr"), Locale.forLanguageTag("lt"))
}
