package hsbloom.catalog

import org.scalatest.funsuite.AnyFunSuite

/** The loaded-data cache's bound (`hsbloom.index.WeighedCache`): the whole of it serves one entry. */
class IndexCatalogCacheSuite extends AnyFunSuite {
  test("an entry heavier than a quarter of the bound stays (Guava's default four segments dropped it at once)") {
    val cache = hsbloom.index.WeighedCache[String, Array[Byte]](1000L, _.length.toLong)
    cache.put("sealed", new Array[Byte](900))
    assert(cache.getIfPresent("sealed") != null)
    cache.put("other", new Array[Byte](200)) // over the bound together: the least recently used goes
    assert(cache.getIfPresent("sealed") == null && cache.getIfPresent("other") != null)
    cache.put("heavier", new Array[Byte](1001)) // heavier than the bound: never kept
    assert(cache.getIfPresent("heavier") == null && cache.getIfPresent("other") != null)
  }
}
