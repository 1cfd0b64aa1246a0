package hsbloom.format

import com.fasterxml.jackson.databind.JsonNode

/**
 * Typed reads of one JSON object of a log entry, each checked before it is returned (`LogJson.parse`): a wrong
 * type or a value out of range throws IllegalArgumentException naming the field (`where.name`) and what it must be.
 */
private[format] final class Fields(node: JsonNode, where: String) {
  if (node == null || !node.isObject) Fields.bad(where, node, "a JSON object")
  private def at(name: String): String = if (where == "the entry") name else s"$where.$name"

  def names: Seq[String] = Fields.listOf(node.fieldNames)
  def optional(name: String): Option[JsonNode] = Option(node.get(name)).filterNot(_.isNull)
  def required(name: String): JsonNode = optional(name).getOrElse(Fields.bad(at(name), null, "present"))

  def long(name: String, max: Long = Long.MaxValue): Long = Fields.long(required(name), at(name), max)
  def text(name: String): String = Fields.text(required(name), at(name))
  def optionalText(name: String): Option[String] = optional(name).map(Fields.text(_, at(name)))
  def obj(name: String): Fields = new Fields(required(name), at(name))
  def optionalObj(name: String): Option[Fields] = optional(name).map(new Fields(_, at(name)))

  private def array(name: String): Seq[JsonNode] = optional(name).map { n =>
    if (!n.isArray) Fields.bad(at(name), n, "a JSON array")
    Fields.listOf(n.elements)
  }.getOrElse(Nil)

  def texts(name: String): Seq[String] = array(name).map(Fields.text(_, s"an element of ${at(name)}"))
  def longs(name: String, max: Long): Seq[Long] = array(name).map(Fields.long(_, s"an element of ${at(name)}", max))
  def objs(name: String): Seq[Fields] = array(name).map(new Fields(_, s"an element of ${at(name)}"))
  /** A JSON object of strings, in its order. */
  def textMap(name: String): Seq[(String, String)] = optionalObj(name).map { m =>
    m.names.map(k => Fields.text(k, s"a key of ${at(name)}") -> m.text(k))
  }.getOrElse(Nil)
}

private[format] object Fields {
  /**
   * A Java iterator's elements, in order. Read by hand: the stored format is below the shim, where the Scala
   * version's collection converters are (`hsbloom.shim.CollectionConverters`).
   */
  private def listOf[A](elements: java.util.Iterator[A]): List[A] = {
    val out = List.newBuilder[A]
    while (elements.hasNext) out += elements.next()
    out.result()
  }

  def bad(what: String, node: JsonNode, must: String): Nothing =
    throw new IllegalArgumentException(s"$what must be $must, got ${LogJson.shown(node)}")

  /** An integer from 0 to `max`: a fraction, a bool, a string or a negative number is not one. */
  def long(n: JsonNode, what: String, max: Long = Long.MaxValue): Long =
    if (n.isIntegralNumber && n.canConvertToLong && n.asLong >= 0 && n.asLong <= max) n.asLong
    else bad(what, n, s"an integer from 0 to $max")

  def text(n: JsonNode, what: String): String =
    if (n.isTextual && n.asText.length <= LogJson.MaxText) n.asText
    else bad(what, n, s"a string of at most ${LogJson.MaxText} characters")

  def text(s: String, what: String): String =
    if (s.length <= LogJson.MaxText) s else throw new IllegalArgumentException(s"$what is longer than ${LogJson.MaxText}")

  def probability(n: JsonNode, what: String): Double =
    if (n.isNumber && n.asDouble > 0 && n.asDouble < 1) n.asDouble else bad(what, n, "a number strictly between 0 and 1")

  def boolean(n: JsonNode, what: String): Boolean = if (n.isBoolean) n.asBoolean else bad(what, n, "true or false")
}
