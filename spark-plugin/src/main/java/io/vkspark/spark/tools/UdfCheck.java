package io.vkspark.spark.tools;

import io.vkspark.gpu.translate.Translation;
import io.vkspark.spark.api.GpuUdf;
import io.vkspark.spark.udf.ScalaClosures;
import io.vkspark.spark.udf.ScalaUdfs;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.reflect.Constructor;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;

/**
 * Says, before a job is deployed, which of its UDFs run on the GPU: every Spark Java UDF class, Java
 * UDF lambda and Scala closure in a jar ({@link UdfScan}), each with "translates" or the
 * translator's exact reason (class, method, source line, instruction), and a count:
 *
 * <pre>{@code
 * java -cp "app.jar:vkspark-spark4.2_2.13-0.1.0-SNAPSHOT.jar:$SPARK_HOME/jars/*" io.vkspark.spark.tools.UdfCheck app.jar
 * translates: com.acme.Pricer (Pricer.java:12, UDF5 class)
 * does not translate: com.acme.Jobs$.$anonfun$main$2 (Jobs.scala:41, Scala Function1 closure): com.acme.Jobs$.$anonfun$main$2 line 41: ...
 * 17 of 23 UDFs translate
 * }</pre>
 *
 * <p>It asks the translator as query planning does ({@code spark.vkspark.translate}): a UDF class
 * is created with its constructor without arguments (the translator reads the object's fields), a
 * lambda is made again from its {@code invokedynamic} ({@link LambdaReplay}) without running the
 * method that holds it. What only the running job knows is "not checked", with the reason: a lambda
 * capturing an object (a case class, the enclosing {@code this}), a class without such a
 * constructor. A class whose static initializer runs code runs it here, as on the driver. A
 * {@link GpuUdf} has its own kernel and is listed apart. Exit code 0, or 2 when a jar cannot be read.
 */
public final class UdfCheck {
  /** What the check says of one UDF. */
  public enum Verdict {
    TRANSLATES("translates"), REFUSED("does not translate"), NOT_CHECKED("not checked"), GPU_UDF("GPU UDF");

    private final String text;

    Verdict(String text) {
      this.text = text;
    }
  }

  /** One UDF: how the report names it, the verdict and, unless it translates, why. */
  public record Finding(String subject, Verdict verdict, String reason) {
    /** The report's line: {@code translates: com.acme.Pricer (Pricer.java:12, UDF5 class)}. */
    public String line() {
      return verdict.text + ": " + subject + (reason == null ? "" : ": " + reason);
    }
  }

  private UdfCheck() {}

  public static void main(String[] args) {
    if (args.length == 0) {
      System.err.println("usage: java -cp \"app.jar:vkspark.jar:$SPARK_HOME/jars/*\" " + UdfCheck.class.getName()
          + " app.jar [more.jar ...]");
      System.exit(2);
    }
    List<Path> jars = new ArrayList<>();
    for (String a : args) {
      Path p = Path.of(a);
      if (!Files.isReadable(p)) {
        System.err.println(a + ": no such readable file. Fix: pass the path of the application's jar.");
        System.exit(2);
      }
      jars.add(p);
    }
    try {
      report(check(jars, UdfCheck.class.getClassLoader()), System.out);
    } catch (IOException e) {
      System.err.println("cannot read " + jars + ": " + e + ". Fix: pass a jar file (a zip of class files).");
      System.exit(2);
    }
  }

  /** Every UDF of {@code jars}, loaded in a class loader over them under {@code parent}. */
  public static List<Finding> check(List<Path> jars, ClassLoader parent) throws IOException {
    URL[] urls = new URL[jars.size()];
    for (int i = 0; i < urls.length; i++) {
      urls[i] = jars.get(i).toUri().toURL();
    }
    List<Finding> out = new ArrayList<>();
    // Not closed: the classes it loaded may still be read by the translator's cache.
    ClassLoader loader = new URLClassLoader(urls, parent);
    for (Path jar : jars) {
      for (UdfScan.Found f : UdfScan.scan(jar)) {
        out.add(f instanceof UdfScan.UdfClass c ? checkClass(c, loader) : checkLambda((UdfScan.Lambda) f, loader));
      }
    }
    return out;
  }

  /** Prints one line per finding, then the count: {@code 17 of 23 UDFs translate}. */
  public static void report(List<Finding> findings, PrintStream out) {
    findings.forEach(f -> out.println(f.line()));
    out.println(summary(findings));
  }

  /** {@code 17 of 23 UDFs translate}, with how many were not checked and how many are GPU UDFs. */
  public static String summary(List<Finding> findings) {
    long translates = findings.stream().filter(f -> f.verdict() == Verdict.TRANSLATES).count();
    long gpu = findings.stream().filter(f -> f.verdict() == Verdict.GPU_UDF).count();
    long unchecked = findings.stream().filter(f -> f.verdict() == Verdict.NOT_CHECKED).count();
    return translates + " of " + (findings.size() - gpu) + " UDFs translate"
        + (unchecked > 0 ? "; " + unchecked + " not checked" : "")
        + (gpu > 0 ? "; " + gpu + " GPU UDF" + (gpu > 1 ? "s" : "") + " with " + (gpu > 1 ? "their" : "its") + " own kernel" : "");
  }

  private static Finding checkClass(UdfScan.UdfClass c, ClassLoader loader) {
    Class<?> k;
    try {
      k = Class.forName(Type.getObjectType(c.name()).getClassName(), false, loader);
    } catch (ClassNotFoundException | LinkageError e) {
      return new Finding(c.subject(), Verdict.NOT_CHECKED, "it does not load (" + e + "); put Spark's jars on the class path");
    }
    if (GpuUdf.class.isAssignableFrom(k)) {
      return new Finding(c.subject(), Verdict.GPU_UDF, "has its own GPU kernel");
    }
    Object udf;
    try {
      Constructor<?> init = k.getDeclaredConstructor();
      init.setAccessible(true);
      udf = init.newInstance();
    } catch (NoSuchMethodException e) {
      return new Finding(c.subject(), Verdict.NOT_CHECKED, "it has no constructor without arguments (the translator "
          + "reads the fields of the object the job makes)");
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      Throwable cause = e instanceof java.lang.reflect.InvocationTargetException i ? i.getCause() : e;
      return new Finding(c.subject(), Verdict.NOT_CHECKED, "its constructor failed (" + cause + ")");
    }
    return verdict(c.subject(), ScalaUdfs.translate(udf));
  }

  private static Finding checkLambda(UdfScan.Lambda l, ClassLoader loader) {
    Type[] captured = Type.getArgumentTypes(l.indy().desc);
    List<Object> values = new ArrayList<>();
    for (Type t : captured) {
      Object zero = LambdaReplay.zero(t);
      if (zero == null) {
        String what = l.impl().getTag() == Opcodes.H_INVOKESTATIC ? "captures a " + t.getClassName()
            : "is a method of the " + t.getClassName() + " it captures";
        return new Finding(l.subject(), Verdict.NOT_CHECKED, what + ", known only when the job runs (the translator "
            + "reads its fields when the query is planned)");
      }
      values.add(zero);
    }
    Object lambda;
    try {
      lambda = LambdaReplay.replay(Class.forName(Type.getObjectType(l.owner()).getClassName(), false, loader),
          l.indy(), values);
    } catch (Throwable e) {
      if (e instanceof VirtualMachineError v) {
        throw v;
      }
      return new Finding(l.subject(), Verdict.NOT_CHECKED, "it could not be made again here (" + e + ")");
    }
    Optional<Translation> scala = ScalaClosures.translation(lambda);
    return verdict(l.subject(), scala.isPresent() ? scala.get() : ScalaUdfs.translate(lambda));
  }

  private static Finding verdict(String subject, Translation t) {
    return t instanceof Translation.Refused r ? new Finding(subject, Verdict.REFUSED, r.reason())
        : new Finding(subject, Verdict.TRANSLATES, null);
  }
}
