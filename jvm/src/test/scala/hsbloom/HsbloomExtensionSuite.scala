package hsbloom

import org.scalatest.funsuite.AnyFunSuite

import hsbloom.functions.SqlFunctions

class HsbloomExtensionSuite extends AnyFunSuite {
  test("the SQL functions name the extension that registers them, by its class name") {
    assert(SqlFunctions.RegisteredBy == classOf[HsbloomExtension].getName)
    assert(SqlFunctions.all.map(_._2.getClassName).distinct == Seq(classOf[HsbloomExtension].getName))
  }
}
