package hsbloom.sbbf

import scala.util.Random

import org.apache.parquet.column.values.bloomfilter.BlockSplitBloomFilter
import org.scalatest.funsuite.AnyFunSuite

/** The three block operations agree with each other and with parquet-java, on words and on serialized bytes. */
class BlockSuite extends AnyFunSuite {
  test("a block checks what it was given, by hash, by mask and serialized, as parquet-java does") {
    val rnd = new Random(11)
    val f = Sbbf.forNdv(500, 0.05)
    val reference = new BlockSplitBloomFilter(f.numBytes)
    val in = Array.fill(500)(rnd.nextLong())
    in.foreach { h => f.insertHash(h); reference.insertHash(h) }
    val bitset = f.bitset
    val mask = new Array[Int](8)
    (in ++ Array.fill(20000)(rnd.nextLong())).foreach { h =>
      val offset = Sbbf.blockIndex(h, f.numBlocks) * Block.Bytes
      Block.mask(h, mask)
      val expected = reference.findHash(h)
      assert(f.mightContainHash(h) == expected)
      assert(Block.contains(bitset, offset, h) == expected)
      assert(Block.containsMask(bitset, offset, mask) == expected)
    }
    assert(in.forall(f.mightContainHash))
  }

  test("a mask has exactly one bit in each word, and inserting it sets exactly those bits") {
    val rnd = new Random(12)
    val mask = new Array[Int](8)
    (0 until 1000).foreach { _ =>
      val h = rnd.nextLong()
      Block.mask(h, mask)
      assert(mask.forall(w => Integer.bitCount(w) == 1))
      val words = new Array[Int](16)
      Block.insert(words, 8, h)
      assert(words.take(8).forall(_ == 0) && words.drop(8).sameElements(mask))
      assert(Block.contains(words, 8, h) && !Block.contains(words, 0, h))
    }
  }
}
