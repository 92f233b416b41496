package io.vkspark.spark.tools;

import io.vkspark.spark.udf.ScalaClosures;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.Handle;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.ClassNode;
import org.objectweb.asm.tree.InvokeDynamicInsnNode;
import org.objectweb.asm.tree.LineNumberNode;
import org.objectweb.asm.tree.MethodNode;

/**
 * Finds the UDFs of a jar in its class files (ASM, nothing loaded): every concrete class
 * implementing a Spark Java UDF interface ({@code UDF0} .. {@code UDF22}, directly or through a
 * superclass of the jar), and every LambdaMetafactory {@code invokedynamic} whose functional
 * interface is one of those or a Scala function ({@code scala.FunctionN},
 * {@code scala.runtime.java8.JFunctionN$mc..$sp}): a Java lambda or a Scala closure, wherever it is
 * written (a closure that is not used as a UDF is listed too: the class file does not say).
 */
final class UdfScan {
  private static final Pattern JAVA_UDF = Pattern.compile("org/apache/spark/sql/api/java/(UDF\\d+)");
  private static final Pattern SCALA_FUNCTION = Pattern.compile("scala/(?:runtime/java8/J)?(Function\\d+).*");

  private UdfScan() {}

  /** A UDF class: its internal name, source file, the first line of its {@code call()}, the interface. */
  record UdfClass(String name, String sourceFile, int line, String udfInterface) implements Found {
    @Override
    public String subject() {
      return Type.getObjectType(name).getClassName() + " (" + where(sourceFile, line) + ", " + udfInterface + " class)";
    }
  }

  /**
   * A lambda: the class and method that create it, the {@code invokedynamic} (its bootstrap
   * arguments name the implementation method), its source line, and what it is ("UDF1 lambda",
   * "Scala Function3 closure").
   */
  record Lambda(String owner, String sourceFile, int line, InvokeDynamicInsnNode indy, String kind) implements Found {
    Handle impl() {
      return (Handle) indy.bsmArgs[1];
    }

    @Override
    public String subject() {
      return Type.getObjectType(impl().getOwner()).getClassName() + "." + impl().getName() + " ("
          + where(sourceFile, line) + ", " + kind + ")";
    }
  }

  /** What the scan found. */
  sealed interface Found permits UdfClass, Lambda {
    /** How the report names it: {@code com.acme.Pricer (Pricer.java:12, UDF5 class)}. */
    String subject();
  }

  private static String where(String sourceFile, int line) {
    return (sourceFile == null ? "unknown source" : sourceFile) + (line > 0 ? ":" + line : "");
  }

  /** The UDF classes and lambdas of {@code jar}, by class name, then source line. */
  static List<Found> scan(Path jar) throws IOException {
    Map<String, ClassNode> classes = new HashMap<>();
    try (ZipFile zip = new ZipFile(jar.toFile())) {
      List<? extends ZipEntry> entries = zip.stream()
          .filter(e -> e.getName().endsWith(".class") && !e.getName().startsWith("META-INF/")).toList();
      for (ZipEntry e : entries) {
        try (InputStream in = zip.getInputStream(e)) {
          ClassNode c = new ClassNode();
          new ClassReader(in.readAllBytes()).accept(c, ClassReader.SKIP_FRAMES);
          classes.put(c.name, c);
        }
      }
    }
    List<Found> out = new ArrayList<>();
    for (ClassNode c : classes.values()) {
      String udf = udfInterface(c, classes);
      if (udf != null && (c.access & (Opcodes.ACC_ABSTRACT | Opcodes.ACC_INTERFACE)) == 0) {
        out.add(new UdfClass(c.name, c.sourceFile, callLine(c), udf));
      }
      for (MethodNode m : c.methods) {
        if (m.name.equals("$deserializeLambda$")) {
          continue; // javac re-creates each serializable lambda there
        }
        int line = 0;
        for (AbstractInsnNode insn : m.instructions) {
          if (insn instanceof LineNumberNode l) {
            line = l.line;
          } else if (insn instanceof InvokeDynamicInsnNode indy && kind(indy) != null) {
            out.add(new Lambda(c.name, c.sourceFile, line, indy, kind(indy)));
          }
        }
      }
    }
    out.sort(Comparator.comparing((Found f) -> f instanceof UdfClass u ? u.name() : ((Lambda) f).owner())
        .thenComparingInt(f -> f instanceof UdfClass u ? u.line() : ((Lambda) f).line())
        .thenComparing(Found::subject));
    return out;
  }

  /** "UDF1 lambda" or "Scala Function3 closure" for a lambda of one of those interfaces; null otherwise. */
  private static String kind(InvokeDynamicInsnNode indy) {
    if (!indy.bsm.getOwner().equals("java/lang/invoke/LambdaMetafactory") || indy.bsmArgs.length < 3
        || !(indy.bsmArgs[1] instanceof Handle)) {
      return null;
    }
    String iface = Type.getReturnType(indy.desc).getInternalName();
    Matcher java = JAVA_UDF.matcher(iface);
    if (java.matches()) {
      return java.group(1) + " lambda";
    }
    Matcher scala = SCALA_FUNCTION.matcher(iface);
    return ScalaClosures.isScalaFunction(iface) && scala.matches() ? "Scala " + scala.group(1) + " closure" : null;
  }

  /** The Spark UDF interface {@code c} implements, itself or through a superclass of the jar; null if none. */
  private static String udfInterface(ClassNode c, Map<String, ClassNode> classes) {
    for (ClassNode k = c; k != null; k = k.superName == null ? null : classes.get(k.superName)) {
      for (String i : k.interfaces) {
        Matcher m = JAVA_UDF.matcher(i);
        if (m.matches()) {
          return m.group(1);
        }
      }
    }
    return null;
  }

  /** The first source line of {@code c}'s {@code call} method that is not a bridge; 0 if unknown. */
  private static int callLine(ClassNode c) {
    for (MethodNode m : c.methods) {
      if (m.name.equals("call") && (m.access & (Opcodes.ACC_BRIDGE | Opcodes.ACC_SYNTHETIC)) == 0) {
        for (AbstractInsnNode insn : m.instructions) {
          if (insn instanceof LineNumberNode l) {
            return l.line;
          }
        }
      }
    }
    return 0;
  }
}
