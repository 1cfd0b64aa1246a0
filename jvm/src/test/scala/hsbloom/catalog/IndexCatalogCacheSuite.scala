package hsbloom.catalog

import org.scalatest.funsuite.AnyFunSuite

/** The loaded-data cache's bound (`hsbloom.index.WeighedCache`): the whole of it serves one entry. */
class IndexCatalogCacheSuite extends AnyFunSuite {
  test("an entry heavier than a quarter of the bound stays (Guava's default four segments dropped it at once)") {
    val cache = hsbloom.index.WeighedCache[String, Array[Byte]](1000L, _.length.toLong)
    cache.get("sealed")(new Array[Byte](900))
    assert(cache.getIfPresent("sealed").isDefined)
    cache.get("other")(new Array[Byte](200)) // over the bound together: the least recently used goes
    assert(cache.getIfPresent("sealed").isEmpty && cache.getIfPresent("other").isDefined)
    val heavier = new Array[Byte](1001)
    assert(cache.get("heavier")(heavier) eq heavier) // heavier than the bound: handed back, never kept
    assert(cache.getIfPresent("heavier").isEmpty && cache.getIfPresent("other").isDefined)
  }

  test("a value is loaded once while cached; a failed load is thrown as it is, and the next get loads again") {
    val cache = hsbloom.index.WeighedCache[String, Array[Byte]](1000L, _.length.toLong)
    var loads = 0
    def load(): Array[Byte] = { loads += 1; new Array[Byte](10) }
    val first = cache.get("a")(load())
    assert((cache.get("a")(load()) eq first) && loads == 1)
    val failure = intercept[IllegalStateException](cache.get("b")(throw new IllegalStateException("unreadable")))
    assert(failure.getMessage == "unreadable")
    assert(cache.get("b")(load()).length == 10 && loads == 2)
  }
}
