package hsbloom.sbbf

import java.io.ByteArrayOutputStream
import java.nio.file.{Files, Paths}

import scala.util.Random

import org.apache.parquet.column.values.bloomfilter.BlockSplitBloomFilter
import org.apache.parquet.io.api.Binary
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

class SbbfSuite extends AnyFunSuite {
  /** Filters other Parquet implementations wrote (tests/vectors/external, see its README). */
  private val externalVectors =
    Paths.get(sys.env.getOrElse("HSBLOOM_VECTORS", "../tests/vectors")).resolve("external")

  private def hex(bytes: Array[Byte]): String = bytes.map(b => f"${b & 0xff}%02x").mkString

  /** parquet-java's serialization of its filter: header then bitset. */
  private def parquetJavaBytes(f: BlockSplitBloomFilter): Array[Byte] = {
    val out = new ByteArrayOutputStream()
    f.writeTo(out) // bitset only
    Sbbf.header(f.getBitsetSize) ++ out.toByteArray
  }

  test("XXH64 of empty input with seed 0 is the reference constant") {
    assert(ParquetHash.hashBytes(Array.emptyByteArray) == 0xEF46DB3751D8E999L)
  }

  test("parquet-mr's bloom_filter.xxhash.bin: header, bitset and the four strings") {
    val bytes = Files.readAllBytes(externalVectors.resolve("bloom_filter.xxhash.bin"))
    val header = Sbbf.parseHeader(bytes)
    assert(header == Sbbf.Header(1024, 16))
    assert(hex(bytes.take(16)) == "1580101c1c00001c1c00001c1c000000")
    val filter = Sbbf.fromBytes(bytes)
    assert(filter.popcount == 32)
    val rebuilt = Sbbf.ofBytes(1024)
    Seq("hello", "parquet", "bloom", "filter").foreach(s => rebuilt.insertHash(ParquetHash.hashUTF8(UTF8String.fromString(s))))
    assert(rebuilt == filter)
    assert(rebuilt.toBytes.sameElements(bytes))
  }

  test("the deprecated Murmur3 format is refused with a message saying so") {
    val bytes = Files.readAllBytes(externalVectors.resolve("bloom_filter.bin"))
    val e = intercept[SbbfFormatException](Sbbf.fromBytes(bytes))
    assert(e.getMessage.contains("Murmur3"))
  }

  test("arrow-rs fixture: a0..a9 in one block") {
    val expected = Array(200, 1, 80, 20, 64, 68, 8, 109, 6, 37, 4, 67, 144, 80, 96, 32, 8, 132, 43, 33, 0, 5, 99, 65, 2,
      0, 224, 44, 64, 78, 96, 4).map(_.toByte)
    val filter = Sbbf.ofBytes(32)
    (0 until 10).foreach(i => filter.insertHash(ParquetHash.hashUTF8(UTF8String.fromString(s"a$i"))))
    assert(filter.bitset.sameElements(expected))
  }

  test("sizing follows the spec formula and arrow-rs's tables") {
    val bits = Seq((0.1, 10L, 57L), (0.1, 1000L, 5772L), (0.1, 1000000L, 5772541L), (0.01, 10L, 96L),
      (0.01, 1000L, 9681L), (0.01, 1000000L, 9681526L), (0.001, 10L, 146L), (0.001, 1000L, 14607L),
      (0.001, 1000000L, 14607697L))
    bits.foreach { case (fpp, ndv, m) => assert(Sbbf.optimalNumBits(ndv, fpp) == m, s"ndv $ndv fpp $fpp") }
    val bytes = Seq(0L -> 32, 9L -> 32, 31L -> 32, 32L -> 32, 33L -> 64, 99L -> 128, 1024L -> 1024, 999000000L -> 134217728)
    bytes.foreach { case (in, out) => assert(Sbbf.optimalNumBytes(in) == out, s"$in bytes") }
    assert(Sbbf.forNdv(1000, 0.01).numBytes == 2048)
  }

  test("header lengths from 15 to 19 bytes round-trip") {
    Seq(32, 64, 1024, 1 << 20, Sbbf.MaxBytes).foreach { n =>
      val h = Sbbf.header(n)
      assert(h.length >= 15 && h.length <= 19)
      assert(Sbbf.parseHeader(h ++ new Array[Byte](n)) == Sbbf.Header(n, h.length))
    }
  }

  test("corrupt headers are refused with what is wrong") {
    val good = Sbbf.ofBytes(64).toBytes
    def refuse(bytes: Array[Byte], message: String): Unit = {
      val e = intercept[SbbfFormatException](Sbbf.fromBytes(bytes))
      assert(e.getMessage.contains(message), e.getMessage)
    }
    refuse(good.take(good.length - 1), "truncated")
    refuse(Array.emptyByteArray, "past the end")
    refuse(Sbbf.header(48).++(new Array[Byte](48)), "multiple of 32")
    refuse(good.updated(8, 0x2c.toByte), "hash") // hash union member 2 instead of XXHASH
    refuse(Array[Byte](0x00), "numBytes is missing")
  }

  private val fpp = 0.01

  /** Inserts the same values into ours and parquet-java's filters and compares the bytes. */
  private def compareWithParquetJava[T](values: Seq[T], ours: T => Long, theirs: (BlockSplitBloomFilter, T) => Long): Unit = {
    val numBytes = Sbbf.forNdv(values.size, fpp).numBytes
    val mine = Sbbf.ofBytes(numBytes)
    val reference = new BlockSplitBloomFilter(numBytes)
    values.foreach { v =>
      val h = ours(v)
      assert(h == theirs(reference, v), s"hash of $v")
      mine.insertHash(h)
      reference.insertHash(h)
    }
    assert(mine.toBytes.sameElements(parquetJavaBytes(reference)))
    values.foreach(v => assert(mine.mightContainHash(ours(v))))
  }

  test("bitsets equal parquet-java's on random values of every physical type") {
    val rnd = new Random(42)
    val n = 5000
    val ints = Seq.fill(n)(rnd.nextInt()) ++ Seq(0, -1, Int.MinValue, Int.MaxValue)
    compareWithParquetJava[Int](ints, ParquetHash.hashInt, (f, v) => f.hash(v))
    val longs = Seq.fill(n)(rnd.nextLong()) ++ Seq(0L, -1L, Long.MinValue, Long.MaxValue)
    compareWithParquetJava[Long](longs, ParquetHash.hashLong, (f, v) => f.hash(v))
    val floats = Seq.fill(n)(rnd.nextFloat() * 1e6f - 5e5f) ++ Seq(0.0f, -0.0f, Float.NaN, Float.PositiveInfinity)
    compareWithParquetJava[Float](floats, ParquetHash.hashFloat, (f, v) => f.hash(v))
    val doubles = Seq.fill(n)(rnd.nextGaussian() * 1e12) ++ Seq(0.0, -0.0, Double.NaN, Double.NegativeInfinity)
    compareWithParquetJava[Double](doubles, ParquetHash.hashDouble, (f, v) => f.hash(v))
    val strings = Seq.fill(n)(rnd.nextString(rnd.nextInt(40))) ++ Seq("", "é", "\uD83D\uDE00", "a" * 1000)
    compareWithParquetJava[String](strings, s => ParquetHash.hashUTF8(UTF8String.fromString(s)),
      (f, v) => f.hash(Binary.fromString(v)))
    val binaries = Seq.fill(n)(Array.fill(rnd.nextInt(70))(rnd.nextInt().toByte))
    compareWithParquetJava[Array[Byte]](binaries, ParquetHash.hashBytes, (f, v) => f.hash(Binary.fromConstantByteArray(v)))
  }

  test("row hashers agree with the physical-type hashes Spark's Parquet writer implies") {
    import org.apache.spark.sql.catalyst.InternalRow
    val d9 = Decimal(BigDecimal("-1234567.89"), 9, 2)
    val d18 = Decimal(BigDecimal("123456789012345.678"), 18, 3)
    val d38 = Decimal(BigDecimal("-12345678901234567890123456789.123456789"), 38, 9)
    val d20 = Decimal(BigDecimal("1"), 20, 0)
    val row = InternalRow(1.toByte, (-2).toShort, 3, 4L, 5.5f, -6.5, UTF8String.fromString("x"), Array[Byte](1, 2),
      19000, 1700000000000000L, d9, d18, d38, d20)
    val types = Seq(ByteType, ShortType, IntegerType, LongType, FloatType, DoubleType, StringType, BinaryType,
      DateType, TimestampType, DecimalType(9, 2), DecimalType(18, 3), DecimalType(38, 9), DecimalType(20, 0))
    val expected = Seq(ParquetHash.hashInt(1), ParquetHash.hashInt(-2), ParquetHash.hashInt(3), ParquetHash.hashLong(4),
      ParquetHash.hashFloat(5.5f), ParquetHash.hashDouble(-6.5), ParquetHash.hashBytes("x".getBytes),
      ParquetHash.hashBytes(Array[Byte](1, 2)), ParquetHash.hashInt(19000), ParquetHash.hashLong(1700000000000000L),
      ParquetHash.hashInt(-123456789), ParquetHash.hashLong(123456789012345678L),
      ParquetHash.hashBytes(fixedBigEndian(BigInt("-12345678901234567890123456789123456789"), 16)),
      ParquetHash.hashBytes(fixedBigEndian(BigInt(1), 9)))
    types.zipWithIndex.foreach { case (dt, i) =>
      val hasher = ParquetHash.hasherFor(dt).get
      assert(hasher.hash(row, i) == expected(i), s"$dt")
      assert(ParquetHash.hashValue(row.get(i, dt), dt) == expected(i), s"$dt literal")
    }
  }

  private def fixedBigEndian(v: BigInt, length: Int): Array[Byte] = {
    val raw = v.toByteArray
    Array.fill[Byte](length - raw.length)(if (v < 0) -1 else 0) ++ raw
  }

  test("unsupported types have no hasher (collated strings: CollatedHashSuite)") {
    Seq(BooleanType, ArrayType(IntegerType), MapType(StringType, StringType), new StructType().add("a", IntegerType))
      .foreach { dt =>
      assert(ParquetHash.hasherFor(dt).isEmpty, s"$dt")
    }
  }

  test("no false negatives, and folding equals a fresh build at the smaller size") {
    val rnd = new Random(7)
    val hashes = Array.fill(20000)(rnd.nextLong())
    val big = Sbbf.ofBytes(1 << 16)
    hashes.foreach(big.insertHash)
    assert(hashes.forall(big.mightContainHash))
    Seq(1 << 15, 1 << 12, 32).foreach { n =>
      val fresh = Sbbf.ofBytes(n)
      hashes.foreach(fresh.insertHash)
      assert(big.foldTo(n) == fresh, s"fold to $n")
    }
    val estimate = big.estimatedNdv.toDouble
    assert(math.abs(estimate / hashes.length - 1) < 0.03, s"ndv estimate $estimate for ${hashes.length}")
    val folded = big.foldToTargetFpp(0.01)
    assert(folded.numBytes < big.numBytes && folded.estimatedFpp <= 0.01)
    assert(folded.foldTo(folded.numBytes / 2).estimatedFpp > 0.01)
    assert(hashes.forall(folded.mightContainHash))
  }

  test("probing a serialized filter reads the same answer as the filter") {
    val rnd = new Random(3)
    val f = Sbbf.forNdv(1000, 0.01)
    val in = Array.fill(1000)(rnd.nextLong())
    in.foreach(f.insertHash)
    val bytes = f.toBytes
    (in ++ Array.fill(5000)(rnd.nextLong())).foreach { h =>
      assert(Sbbf.probeSerialized(bytes, h) == f.mightContainHash(h))
    }
  }

  test("union ORs equal-sized filters and refuses different sizes") {
    val a = Sbbf.ofBytes(64); a.insertHash(1L)
    val b = Sbbf.ofBytes(64); b.insertHash(2L << 40)
    a.union(b)
    assert(a.mightContainHash(1L) && a.mightContainHash(2L << 40))
    intercept[IllegalArgumentException](a.union(Sbbf.ofBytes(32)))
  }
}
