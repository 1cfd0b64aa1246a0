package hsbloom.index

import java.util.concurrent.{Callable, ExecutionException}

import com.google.common.cache.{Cache, CacheBuilder, Weigher}
import com.google.common.util.concurrent.UncheckedExecutionException

/**
 * hsbloom's caches bounded by bytes (loaded index data, global filters on
 * executors and, decrypted, on the driver): at most `maxBytes` by `weight`,
 * least recently used out, one load of a key at a time.
 *
 * Guava's bound is made exact on the Guava of every Spark (14 in Spark 3.5,
 * 33 in Spark 4). One segment: Guava splits `maximumWeight` among its
 * segments (four by default) and drops at once an entry heavier than its
 * segment's share, so an entry of more than a quarter of the bound (a sealed
 * index's decrypted filters, a large global filter) would be loaded again at
 * every use. Entries are looked up once a query or a task, not per row: one
 * segment's lock costs no waiting. And a value heavier than the whole bound
 * is handed back without entering the cache: Guava 14 would first evict every
 * other entry to make room for it, then it too.
 */
final class WeighedCache[K <: AnyRef, V <: AnyRef] private (maxBytes: Long, weight: V => Long) {
  private val cache: Cache[K, V] = CacheBuilder.newBuilder()
    .concurrencyLevel(1)
    .maximumWeight(maxBytes)
    .weigher(new Weigher[K, V] {
      override def weigh(k: K, v: V): Int = math.min(weight(v), Int.MaxValue.toLong).toInt
    })
    .build[K, V]()

  /**
   * The value of `key`: the cached one, else `load`'s, kept unless heavier than the bound. Threads asking for a
   * key being loaded wait for that load. Throws what `load` throws.
   */
  def get(key: K)(load: => V): V =
    try {
      cache.get(key, new Callable[V] {
        override def call(): V = {
          val value = load
          if (weight(value) > maxBytes) throw new WeighedCache.TooHeavy(value)
          value
        }
      })
    } catch {
      case e @ (_: ExecutionException | _: UncheckedExecutionException) if e.getCause != null => e.getCause match {
        case tooHeavy: WeighedCache.TooHeavy => tooHeavy.value.asInstanceOf[V]
        case cause => throw cause
      }
    }

  def getIfPresent(key: K): Option[V] = Option(cache.getIfPresent(key))

  def invalidateAll(): Unit = cache.invalidateAll()
}

object WeighedCache {
  def apply[K <: AnyRef, V <: AnyRef](maxBytes: Long, weight: V => Long): WeighedCache[K, V] =
    new WeighedCache[K, V](maxBytes, weight)

  /** A loaded value too heavy to keep, carried out of Guava's loader (which keeps whatever it returns). */
  private final class TooHeavy(val value: AnyRef) extends Exception(null, null, false, false)
}
