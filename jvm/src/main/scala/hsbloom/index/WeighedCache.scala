package hsbloom.index

import com.google.common.cache.{Cache, CacheBuilder, Weigher}

/**
 * hsbloom's caches bounded by bytes (loaded index data, global filters on
 * executors and, decrypted, on the driver): at most `maxBytes` by `weight`,
 * least recently used out, in one segment. Guava splits `maximumWeight` among
 * its segments (four by default) and drops at once an entry heavier than its
 * segment's share, so an entry of more than a quarter of the bound (a sealed
 * index's decrypted filters, a large global filter) would be loaded again at
 * every use. Entries are looked up once a query or a task, not per row: one
 * segment's lock costs no waiting.
 */
object WeighedCache {
  def apply[K <: AnyRef, V <: AnyRef](maxBytes: Long, weight: V => Long): Cache[K, V] =
    CacheBuilder.newBuilder()
      .concurrencyLevel(1)
      .maximumWeight(maxBytes)
      .weigher(new Weigher[K, V] {
        override def weigh(k: K, v: V): Int = math.min(weight(v), Int.MaxValue.toLong).toInt
      })
      .build[K, V]()
}
