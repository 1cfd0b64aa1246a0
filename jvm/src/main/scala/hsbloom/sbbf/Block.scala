package hsbloom.sbbf

/**
 * One block of a split block Bloom filter and the three operations the
 * Parquet spec defines on it; the one place that turns a hash into bits
 * (every insert and every probe, of the build, of planning and of joins,
 * goes through here).
 *
 * A block is 256 bits: eight contiguous 32-bit words, each an array of 32
 * bits, stored little-endian when serialized. An insert or a check touches
 * one block, picked by the hash's upper half (`Sbbf.blockIndex`); its lower
 * half `x = h.toInt` picks the bits within it:
 *
 *  - `mask(x)`: the block in which word `i` has exactly one bit set, bit
 *    `(x * SALT(i)) >>> 27` (the top 5 bits of the 32-bit product, 0 to 31),
 *    for the spec's eight odd constants `SALT(0..7)`;
 *  - `insert(x)`: sets in the block every bit set in `mask(x)`;
 *  - `check(x)`: true when every bit set in `mask(x)` is set in the block.
 *
 * A value inserted is always found; one never inserted is found when its eight
 * bits were set by others: with a fraction `f(i)` of word `i`'s bits set,
 * with probability `f(0) * ... * f(7)`.
 *
 * These run for every value built and every probe, so they allocate nothing
 * and are written out word by word (markedly faster than a loop over the
 * salts: MapSideBench). A caller testing one hash against many blocks (the
 * same block of many filters, `SlotPredicates`) computes the mask once
 * (`mask`) and tests each block with `containsMask`.
 */
object Block {
  /** Bytes of a block. */
  final val Bytes = 32

  /** `SALT(i)`: the multipliers of the eight words (the Parquet spec's). */
  private val Salts: Array[Int] = Array(
    0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31)

  /** `mask(x)` of the hash `h` (`x = h.toInt`), into `out` (eight words). */
  @inline def mask(h: Long, out: Array[Int]): Unit = {
    val x = h.toInt
    var i = 0
    while (i < 8) { out(i) = 1 << ((x * Salts(i)) >>> 27); i += 1 }
  }

  /** `insert(x)` of the hash `h` into the block at word `base` of `words`. */
  @inline def insert(words: Array[Int], base: Int, h: Long): Unit = {
    val x = h.toInt
    words(base) |= 1 << ((x * 0x47b6137b) >>> 27)
    words(base + 1) |= 1 << ((x * 0x44974d91) >>> 27)
    words(base + 2) |= 1 << ((x * 0x8824ad5b) >>> 27)
    words(base + 3) |= 1 << ((x * 0xa2b7289d) >>> 27)
    words(base + 4) |= 1 << ((x * 0x705495c7) >>> 27)
    words(base + 5) |= 1 << ((x * 0x2df1424b) >>> 27)
    words(base + 6) |= 1 << ((x * 0x9efc4947) >>> 27)
    words(base + 7) |= 1 << ((x * 0x5c6bfb31) >>> 27)
  }

  /** `check(x)` of the hash `h` against the block at word `base` of `words`. */
  @inline def contains(words: Array[Int], base: Int, h: Long): Boolean = {
    val x = h.toInt
    (words(base) & (1 << ((x * 0x47b6137b) >>> 27))) != 0 &&
      (words(base + 1) & (1 << ((x * 0x44974d91) >>> 27))) != 0 &&
      (words(base + 2) & (1 << ((x * 0x8824ad5b) >>> 27))) != 0 &&
      (words(base + 3) & (1 << ((x * 0xa2b7289d) >>> 27))) != 0 &&
      (words(base + 4) & (1 << ((x * 0x705495c7) >>> 27))) != 0 &&
      (words(base + 5) & (1 << ((x * 0x2df1424b) >>> 27))) != 0 &&
      (words(base + 6) & (1 << ((x * 0x9efc4947) >>> 27))) != 0 &&
      (words(base + 7) & (1 << ((x * 0x5c6bfb31) >>> 27))) != 0
  }

  /** `check(x)` of the hash `h` against the serialized block at byte `offset` of `bytes`. */
  @inline def contains(bytes: Array[Byte], offset: Int, h: Long): Boolean = {
    val x = h.toInt
    (word(bytes, offset) & (1 << ((x * 0x47b6137b) >>> 27))) != 0 &&
      (word(bytes, offset + 4) & (1 << ((x * 0x44974d91) >>> 27))) != 0 &&
      (word(bytes, offset + 8) & (1 << ((x * 0x8824ad5b) >>> 27))) != 0 &&
      (word(bytes, offset + 12) & (1 << ((x * 0xa2b7289d) >>> 27))) != 0 &&
      (word(bytes, offset + 16) & (1 << ((x * 0x705495c7) >>> 27))) != 0 &&
      (word(bytes, offset + 20) & (1 << ((x * 0x2df1424b) >>> 27))) != 0 &&
      (word(bytes, offset + 24) & (1 << ((x * 0x9efc4947) >>> 27))) != 0 &&
      (word(bytes, offset + 28) & (1 << ((x * 0x5c6bfb31) >>> 27))) != 0
  }

  /** `check` with the mask computed once (`mask`): whether the block at byte `offset` of `bytes` has all its bits. */
  @inline def containsMask(bytes: Array[Byte], offset: Int, mask: Array[Int]): Boolean = {
    var i = 0
    while (i < 8) {
      if ((word(bytes, offset + 4 * i) & mask(i)) == 0) return false
      i += 1
    }
    true
  }

  /** The little-endian 32-bit word at byte `p` of `bytes`. */
  @inline private def word(bytes: Array[Byte], p: Int): Int =
    (bytes(p) & 0xff) | ((bytes(p + 1) & 0xff) << 8) | ((bytes(p + 2) & 0xff) << 16) | ((bytes(p + 3) & 0xff) << 24)
}
