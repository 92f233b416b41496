package io.vkspark.gpu;

import static org.junit.jupiter.api.Assertions.*;

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.lang.reflect.WildcardType;
import java.lang.reflect.GenericArrayType;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * gpu-core's public API stays out of {@code io.vkspark.gpu.internal}: no public or protected type,
 * method, constructor, field or record component of an exported package names an internal type
 * (module-info exports io.vkspark.gpu and every package below it but internal, so such a signature would be
 * unusable from outside). Reflection over the compiled main classes, so it holds on the class path too.
 */
final class ModuleApiTest {
  private static final String INTERNAL = "io.vkspark.gpu.internal.";
  private static final Set<String> EXPORTED = Set.of("io.vkspark.gpu", "io.vkspark.gpu.column", "io.vkspark.gpu.column.cache",
      "io.vkspark.gpu.column.input", "io.vkspark.gpu.column.reduce", "io.vkspark.gpu.column.run",
      "io.vkspark.gpu.translate", "io.vkspark.gpu.tools", "io.vkspark.gpu.vulkan");

  @Test
  void module_exportsOnlyThePublicPackages() {
    Module m = GpuDevice.class.getModule();
    if (m.isNamed()) { // surefire runs gpu-core's tests on the module path
      assertEquals("io.vkspark.gpu", m.getName());
      assertEquals(EXPORTED, m.getDescriptor().exports().stream()
          .map(e -> e.source()).collect(java.util.stream.Collectors.toSet()));
      assertFalse(m.isExported("io.vkspark.gpu.internal"));
    }
  }

  @Test
  void noExportedSignature_namesAnInternalType() throws Exception {
    List<String> leaks = new ArrayList<>();
    int types = 0;
    for (Class<?> c : mainClasses()) {
      if (!EXPORTED.contains(c.getPackageName()) || !visible(c)) {
        continue;
      }
      types++;
      String where = c.getName();
      check(leaks, where + " extends", c.getGenericSuperclass());
      for (Type t : c.getGenericInterfaces()) {
        check(leaks, where + " implements", t);
      }
      for (Field f : c.getDeclaredFields()) {
        if (visible(f.getModifiers(), c)) {
          check(leaks, where + "." + f.getName(), f.getGenericType());
        }
      }
      List<Executable> members = new ArrayList<>(List.of(c.getDeclaredMethods()));
      members.addAll(List.of(c.getDeclaredConstructors()));
      for (Executable e : members) {
        if (!visible(e.getModifiers(), c) || e.isSynthetic()) {
          continue;
        }
        String name = where + "." + (e instanceof Constructor<?> ? "<init>" : e.getName());
        if (e instanceof Method m) {
          check(leaks, name + " returns", m.getGenericReturnType());
        }
        for (Type t : e.getGenericParameterTypes()) {
          check(leaks, name + " takes", t);
        }
        for (Type t : e.getGenericExceptionTypes()) {
          check(leaks, name + " throws", t);
        }
      }
      if (c.isRecord()) {
        for (RecordComponent r : c.getRecordComponents()) {
          check(leaks, where + "." + r.getName(), r.getGenericType());
        }
      }
    }
    assertTrue(types > 40, "found only " + types + " public types: is the scan reading target/classes?");
    assertEquals(List.of(), leaks, "public API naming io.vkspark.gpu.internal types");
  }

  /** Public or protected, and nested only in such types. */
  private static boolean visible(Class<?> c) {
    for (Class<?> k = c; k != null; k = k.getDeclaringClass()) {
      if (!visible(k.getModifiers(), k.getDeclaringClass()) || k.isAnonymousClass() || k.isLocalClass()) {
        return false;
      }
    }
    return true;
  }

  private static boolean visible(int modifiers, Class<?> owner) {
    return Modifier.isPublic(modifiers)
        || (Modifier.isProtected(modifiers) && owner != null && !Modifier.isFinal(owner.getModifiers()));
  }

  private static void check(List<String> leaks, String where, Type t) {
    if (t == null) {
      return;
    }
    if (t instanceof Class<?> c) {
      Class<?> e = c;
      while (e.isArray()) {
        e = e.getComponentType();
      }
      if (e.getName().startsWith(INTERNAL)) {
        leaks.add(where + " " + e.getName());
      }
    } else if (t instanceof ParameterizedType p) {
      check(leaks, where, p.getRawType());
      for (Type a : p.getActualTypeArguments()) {
        check(leaks, where, a);
      }
    } else if (t instanceof WildcardType w) {
      Stream.concat(Stream.of(w.getUpperBounds()), Stream.of(w.getLowerBounds())).forEach(b -> check(leaks, where, b));
    } else if (t instanceof GenericArrayType g) {
      check(leaks, where, g.getGenericComponentType());
    }
  }

  /** Every class compiled from src/main/java: the directory or jar GpuDevice was loaded from. */
  private static Set<Class<?>> mainClasses() throws IOException, URISyntaxException, ClassNotFoundException {
    Path location = Path.of(GpuDevice.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    // target/classes under Maven; the module's jar when the suite runs from jars (scripts/kit-suite.sh)
    java.nio.file.FileSystem jar = Files.isDirectory(location) ? null : java.nio.file.FileSystems.newFileSystem(location);
    Path root = jar == null ? location : jar.getPath("/");
    Set<String> names = new TreeSet<>();
    try (Stream<Path> files = Files.walk(root)) {
      files.filter(p -> p.toString().endsWith(".class") && !p.getFileName().toString().equals("module-info.class"))
          .forEach(p -> {
            String rel = root.relativize(p).toString().replace(p.getFileSystem().getSeparator(), ".");
            names.add(rel.substring(0, rel.length() - ".class".length()));
          });
    } finally {
      if (jar != null) {
        jar.close();
      }
    }
    assertTrue(names.size() > 20, "main classes found in " + location + ": " + names.size());
    Set<Class<?>> out = new java.util.LinkedHashSet<>();
    for (String n : names) {
      out.add(Class.forName(n, false, GpuDevice.class.getClassLoader()));
    }
    return out;
  }
}
