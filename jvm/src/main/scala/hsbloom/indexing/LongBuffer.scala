package hsbloom.indexing

/** A growable array of longs, without boxing. */
private[indexing] final class LongBuffer(initial: Int = 1024) {
  var values = new Array[Long](initial)
  var size = 0
  def append(v: Long): Unit = {
    if (size == values.length) values = java.util.Arrays.copyOf(values, values.length * 2)
    values(size) = v
    size += 1
  }
  def appendAll(more: Array[Long]): Unit = appendAll(more, more.length)
  def appendAll(more: Array[Long], count: Int): Unit = {
    if (size + count > values.length) {
      values = java.util.Arrays.copyOf(values, math.max(values.length * 2, size + count))
    }
    System.arraycopy(more, 0, values, size, count)
    size += count
  }
  def toArray: Array[Long] = java.util.Arrays.copyOf(values, size)
  /** Empties the buffer; its capacity is kept (up to 8 MiB), so the next file does not grow it again. */
  def clear(): Unit = { size = 0; if (values.length > (1 << 20)) values = new Array[Long](1024) }
  /** The filled values, leaving the buffer empty with a fresh array of the same capacity. */
  def handOver(): Array[Long] = {
    val filled = if (size == values.length) values else java.util.Arrays.copyOf(values, size)
    values = new Array[Long](values.length)
    size = 0
    filled
  }
}
