package hsbloom.shim

import java.io.{ByteArrayInputStream, ObjectInputStream, ObjectStreamClass}

/**
 * Java deserialization of objects whose classes are the jar's own. On an
 * executor the jar is loaded by Spark's class loader for added jars, which a
 * plain `ObjectInputStream` (resolving through the caller's loader chain) may
 * not see; classes are resolved through the loader that loaded this jar.
 */
object JarObjectInput {
  def read(bytes: Array[Byte]): AnyRef =
    new ObjectInputStream(new ByteArrayInputStream(bytes)) {
      override def resolveClass(desc: ObjectStreamClass): Class[_] =
        Class.forName(desc.getName, false, JarObjectInput.getClass.getClassLoader)
    }.readObject()
}
