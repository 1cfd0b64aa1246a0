package hsbloom.sql

import java.util.Locale

import scala.util.Try

import hsbloom.{BFIndexConfig, HsbloomException}

/** A value in `OPTIONS (key = value, ...)`, kept as written so that an error can show it. */
private[sql] sealed trait OptionValue { def text: String }

private[sql] object OptionValue {
  final case class Number(text: String) extends OptionValue
  final case class Bool(value: Boolean) extends OptionValue { def text: String = value.toString }
  final case class Str(value: String) extends OptionValue { def text: String = s"'$value'" }
}

/**
 * The OPTIONS of CREATE BLOOMFILTER INDEX, turned into a `BFIndexConfig` when the statement runs, before it
 * reads or writes anything. Keys are case-insensitive; each key takes the literal types
 * that can only mean one value for it (a number or a numeric string for fpp, ...), and anything else is
 * `HsbloomException.InvalidConfig` naming the key and what it takes. The values' ranges are `BFIndexConfig`'s
 * to check, so SQL and the API refuse the same values with the same words.
 */
private[sql] object IndexOptions {
  val Fpp = "fpp"
  val ExpectedNumItems = "expected_num_items"
  val GlobalFilter = "global_filter"
  val Granularity = "granularity"
  val SubstringColumns = "substring_columns"
  val NgramSize = "ngram_size"
  val SubstringCaseInsensitive = "substring_case_insensitive"
  val Known: Seq[String] =
    Seq(Fpp, ExpectedNumItems, GlobalFilter, Granularity, SubstringColumns, NgramSize, SubstringCaseInsensitive)

  private def bad(message: String): Nothing = throw HsbloomException.invalidConfig(message)

  /** The index config of `name` over `columns` with `options` applied over the defaults. */
  def config(name: String, columns: Seq[String], options: Seq[(String, OptionValue)]): BFIndexConfig = {
    val keyed = options.map { case (k, v) => k.toLowerCase(Locale.ROOT) -> v }
    keyed.map(_._1).filterNot(Known.contains).headOption.foreach { k =>
      bad(s"unknown option '$k'; the options of CREATE BLOOMFILTER INDEX are ${Known.mkString(", ")}")
    }
    keyed.groupBy(_._1).collectFirst { case (k, vs) if vs.size > 1 => k }.foreach { k =>
      bad(s"option '$k' is given more than once")
    }
    // In `Known`'s order, so that a setting comes after those it depends on (substring columns before their case).
    keyed.sortBy { case (k, _) => Known.indexOf(k) }.foldLeft(BFIndexConfig(name, columns)) { case (config, (key, value)) =>
      key match {
        case Fpp => config.withFpp(fpp(value))
        case ExpectedNumItems => config.withExpectedNumItems(expectedNumItems(value))
        case GlobalFilter => config.withGlobalFilter(globalFilter(value))
        case Granularity => config.withGranularity(granularity(value))
        case SubstringColumns => config.copy(substringColumns = columnList(SubstringColumns, value))
        case NgramSize => ngramSize(config, value)
        case SubstringCaseInsensitive => config.withSubstringCaseInsensitive(boolean(SubstringCaseInsensitive, value))
      }
    }
  }

  private def fpp(value: OptionValue): Double = {
    val parsed = value match {
      case OptionValue.Number(t) => Try(t.toDouble).toOption
      case OptionValue.Str(s) => Try(s.trim.toDouble).toOption
      case _ => None
    }
    parsed.getOrElse(bad(s"option fpp must be a number strictly between 0 and 1, got ${value.text}"))
  }

  private val Integer = "[+-]?\\d+".r

  private def expectedNumItems(value: OptionValue): Long = {
    val parsed = value match {
      case OptionValue.Number(t @ Integer()) => Try(t.toLong).toOption
      case OptionValue.Str(s) => Try(s.trim.toLong).toOption
      case _ => None
    }
    parsed.getOrElse(bad(s"option expected_num_items must be a positive integer of at most ${Long.MaxValue}, got ${value.text}"))
  }

  private def globalFilter(value: OptionValue): Boolean = boolean(GlobalFilter, value)

  private def boolean(key: String, value: OptionValue): Boolean = value match {
    case OptionValue.Bool(b) => b
    case OptionValue.Str(s) if s.equalsIgnoreCase("true") || s.equalsIgnoreCase("false") => s.toBoolean
    case _ => bad(s"option $key must be true or false, got ${value.text}")
  }

  private def granularity(value: OptionValue): String = value match {
    case OptionValue.Str(s) => BFIndexConfig.granularityOf(s)
    case _ => bad(s"option granularity must be a string, '${BFIndexConfig.FileGranularity}' or " +
      s"'${BFIndexConfig.RowGroupGranularity}', got ${value.text}")
  }

  /** `ngram_size`: one n for every substring column, or 'auto' (the default): each column's n chosen at create. */
  private def ngramSize(config: BFIndexConfig, value: OptionValue): BFIndexConfig = {
    if (config.substringColumns.isEmpty) bad(s"option $NgramSize needs $SubstringColumns: name the columns to search")
    value match {
      case OptionValue.Str(s) if s.trim.equalsIgnoreCase(AutoNgramSize) => config.copy(ngramSizes = Map.empty)
      case _ => config.withNgramSize(smallInt(NgramSize, value, s" or '$AutoNgramSize'"))
    }
  }
  val AutoNgramSize = "auto"

  private def smallInt(key: String, value: OptionValue, orElse: String = ""): Int = {
    val parsed = value match {
      case OptionValue.Number(t @ Integer()) => Try(t.toInt).toOption
      case OptionValue.Str(s) => Try(s.trim.toInt).toOption
      case _ => None
    }
    parsed.getOrElse(bad(s"option $key must be an integer$orElse, got ${value.text}"))
  }

  /**
   * Column names in one string, separated by commas: 'message, url'. A name holding a comma, a backquote or
   * surrounding spaces is written in backquotes, a backquote in it doubled: '`a,b`, c'.
   */
  private[sql] def columnList(key: String, value: OptionValue): Seq[String] = value match {
    case OptionValue.Str(s) => splitNames(s).getOrElse(bad(s"option $key must be column names separated by commas " +
      s"(a name with a comma or a backquote in backquotes, the backquote doubled), got ${value.text}"))
    case _ => bad(s"option $key must be a string of column names separated by commas, got ${value.text}")
  }

  private def splitNames(s: String): Option[Seq[String]] = {
    val names = Seq.newBuilder[String]
    var i = 0
    def skipSpaces(): Unit = while (i < s.length && s.charAt(i).isWhitespace) i += 1
    skipSpaces()
    if (i == s.length) return Some(Nil)
    while (true) {
      skipSpaces()
      if (i < s.length && s.charAt(i) == '`') {
        val name = new StringBuilder
        i += 1
        var closed = false
        while (!closed) {
          if (i >= s.length) return None
          if (s.charAt(i) == '`') {
            if (i + 1 < s.length && s.charAt(i + 1) == '`') { name += '`'; i += 2 } else { closed = true; i += 1 }
          } else { name += s.charAt(i); i += 1 }
        }
        names += name.toString
        skipSpaces()
      } else {
        val end = { val c = s.indexOf(',', i); if (c < 0) s.length else c }
        val name = s.substring(i, end).trim
        if (name.isEmpty || name.contains('`')) return None
        names += name
        i = end
      }
      if (i == s.length) return Some(names.result())
      if (s.charAt(i) != ',') return None
      i += 1
    }
    None
  }
}
