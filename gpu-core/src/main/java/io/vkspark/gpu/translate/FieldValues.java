package io.vkspark.gpu.translate;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.objectweb.asm.Type;

/**
 * What a translation may read of an object known when translating (the UDF, a captured value),
 * for the key of the translation cache: its class and the values of its fields, those of the
 * objects its fields hold included. Two closures of one class over two {@code Fee}s of other
 * rates are two kernels; over equal ones, one. An object's own {@code equals} is not used: it may
 * ignore fields that the kernel reads.
 */
final class FieldValues {
  /** How deep nested objects are followed; deeper ones are compared by identity. */
  private static final int DEPTH = 4;

  private FieldValues() {}

  /** The key of {@code o}'s contents (a list of class, names and values). */
  static List<Object> of(Object o) {
    return of(o, 0, new IdentityHashMap<>());
  }

  private static List<Object> of(Object o, int depth, Map<Object, Integer> seen) {
    List<Object> values = new ArrayList<>();
    values.add(o.getClass());
    Integer at = seen.putIfAbsent(o, seen.size());
    if (at != null) {
      values.add("#" + at); // a cycle, or the same object twice: where it was seen first
      return values;
    }
    for (Class<?> k = o.getClass(); k != null && k != Object.class; k = k.getSuperclass()) {
      for (Field f : k.getDeclaredFields()) {
        if (Modifier.isStatic(f.getModifiers())) {
          continue;
        }
        Object v;
        try {
          f.setAccessible(true);
          v = f.get(o);
        } catch (ReflectiveOperationException | RuntimeException e) {
          values.add(f.getName());
          values.add(e.getClass());
          continue;
        }
        values.add(f.getName());
        values.add(value(v, depth, seen));
      }
    }
    return values;
  }

  /**
   * A field's value as a key: primitives, boxes and strings as they are, primitive arrays a
   * translation may read by contents, objects of the application by theirs.
   */
  private static Object value(Object v, int depth, Map<Object, Integer> seen) {
    if (v == null || v instanceof String || JType.unboxed(Type.getInternalName(v.getClass())) != null) {
      return v;
    }
    if (v.getClass().isArray()) {
      List<Object> elements = new ArrayList<>(List.of(v.getClass()));
      int n = java.lang.reflect.Array.getLength(v);
      if (v.getClass().getComponentType().isPrimitive() && n <= ConstTable.MAX_ELEMENTS) { // read as constant tables
        for (int i = 0; i < n; i++) {
          elements.add(java.lang.reflect.Array.get(v, i));
        }
        return elements;
      }
      return new Identity(v); // a larger table is refused when read; objects' arrays are not read
    }
    if (!KnownObjects.knowable(v)) { // the JDK's, Scala's, Spark's: the translator reads only a modelled value (a date)
      return ObjType.of(Type.getType(v.getClass())) != null ? v : v.getClass();
    }
    return depth < DEPTH ? of(v, depth + 1, seen) : new Identity(v);
  }

  /** An object compared by identity. */
  private record Identity(Object o) {
    @Override
    public boolean equals(Object other) {
      return other instanceof Identity i && i.o == o;
    }

    @Override
    public int hashCode() {
      return System.identityHashCode(o);
    }
  }
}
