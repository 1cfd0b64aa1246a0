package hsbloom.sql

import java.lang.reflect.{InvocationHandler, Method, Proxy}

import scala.collection.mutable

import org.apache.spark.sql.catalyst.parser.ParserInterface
import org.scalatest.funsuite.AnyFunSuite

/** Spark 4's `parseRoutineParam` (3.5's parser has none) goes to the wrapped parser. */
class RoutineParsingSuite extends AnyFunSuite {
  test("parseRoutineParam goes to the wrapped parser") {
    val calls = mutable.Buffer[String]()
    val recorder = Proxy.newProxyInstance(getClass.getClassLoader, Array(classOf[ParserInterface]),
      new InvocationHandler {
        override def invoke(proxy: Any, method: Method, args: Array[AnyRef]): AnyRef = {
          calls += s"${method.getName}(${args.mkString})"
          null
        }
      }).asInstanceOf[ParserInterface]
    new HsbloomSqlParser(recorder).parseRoutineParam("a INT")
    assert(calls == Seq("parseRoutineParam(a INT)"))
  }
}
