package io.vkspark.spark.plan;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.column.SqlType;
import io.vkspark.spark.kernel.CompiledKernels;
import io.vkspark.spark.executor.ExecutorDevice;
import io.vkspark.spark.api.GpuKernel;
import io.vkspark.spark.api.GpuUdf;
import io.vkspark.spark.exec.call.Placement;
import io.vkspark.spark.udf.ScalaUdfs;
import io.vkspark.spark.udf.TranslatedUdf;
import io.vkspark.spark.udf.UdfKind;
import io.vkspark.spark.shim.Scala;
import io.vkspark.spark.api.SparkTypes;
import io.vkspark.spark.conf.PlacementMode;
import io.vkspark.spark.conf.VkConf;

import io.vkspark.gpu.column.ColumnKernel;
import io.vkspark.spark.exec.call.Placement.Cause;
import io.vkspark.spark.exec.call.Placement.DecidedBy;
import java.util.List;
import java.util.Optional;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.ScalaUDF;
import org.apache.spark.sql.types.DataType;

/**
 * Decides, on the driver, where each GPU UDF call runs: on the GPU; on the CPU inside the GPU node
 * (no device, a missing device feature), with the reason shown in EXPLAIN; or left to Spark
 * (types that do not match the kernel), as a {@link Placement}. A body that does not compile fails
 * the query here, naming the UDF and the line of its body. With {@code spark.vkspark.fallback=false}
 * any CPU decision is an error instead ({@link Placement#strict}).
 */
public final class GpuPlanner {
  /**
   * The planner's answer for one call: its {@link Placement}, the kind of UDF it calls (read once,
   * here, and carried to the executor in the call) and, unless Spark keeps the call
   * ({@link Placement#leftToSpark()}), the compiled kernel the GPU node runs.
   */
  public record Decision(Placement placement, ColumnKernel kernel, UdfKind kind) {
    boolean leftToSpark() {
      return placement.leftToSpark();
    }
  }

  private final VkConf conf;
  private final boolean local;

  GpuPlanner(SparkSession session) {
    this.conf = VkConf.of(session);
    this.local = session.sparkContext().isLocal();
  }

  public VkConf conf() {
    return conf;
  }

  /**
   * The GPU UDF {@code u} calls, if it calls one ({@link ScalaUdfs#of}: each function is looked at
   * once, and every rule that asks shares the answer).
   */
  Optional<GpuUdf> udf(ScalaUDF u) {
    return ScalaUdfs.of(u);
  }

  public static String name(ScalaUDF u) {
    return u.udfName().isDefined() ? u.udfName().get() : "udf";
  }

  Decision decide(ScalaUDF u, GpuUdf udf) {
    UdfKind kind = UdfKind.of(udf);
    if (udf instanceof TranslatedUdf t) {
      Optional<String> misfit = misfit(u, t);
      if (misfit.isPresent()) {
        return new Decision(Placement.cpu(Cause.NOT_TRANSLATED, DecidedBy.PLANNER, misfit.get()), null, kind);
      }
      try {
        return decideKernel(u, udf, kind);
      } catch (GpuException e) {
        if (e.code() != GpuException.Code.COMPILE) {
          throw e;
        }
        // a translated kernel that does not compile is the translator's fault, never the query's
        return new Decision(Placement.cpu(Cause.NOT_TRANSLATED, DecidedBy.PLANNER,
            "its kernel does not compile (" + e.what() + ")"), null, kind);
      }
    }
    return decideKernel(u, udf, kind);
  }

  /**
   * Why a translated UDF's kernel does not fit call {@code u}: the SQL types of the call's
   * arguments must be the kernel's argument types (Spark does not cast a Java UDF's arguments), the
   * type it is registered with its result type, and a Scala closure's primitive parameters must
   * never see a null ({@link TranslatedUdf#nullAsZeroArgument}).
   */
  static Optional<String> misfit(ScalaUDF u, TranslatedUdf t) {
    List<Expression> args = Scala.list(u.children());
    List<SqlType> want = t.translation().args();
    if (args.size() != want.size()) {
      return Optional.of("it is called with " + args.size() + " arguments but " + t.translation().source() + " takes "
          + want.size());
    }
    for (int i = 0; i < args.size(); i++) {
      Optional<SqlType> actual = SparkTypes.of(args.get(i).dataType());
      if (actual.isEmpty() || actual.get() != want.get(i)
          || !args.get(i).dataType().equals(SparkTypes.of(want.get(i)))) {
        return Optional.of("argument " + (i + 1) + " is " + args.get(i).dataType().sql() + " but "
            + t.translation().source() + " takes " + want.get(i).sqlName());
      }
    }
    DataType result = SparkTypes.of(t.translation().result());
    if (!u.dataType().equals(result)) {
      return Optional.of("it is registered as returning " + u.dataType().sql() + " but " + t.translation().source()
          + " returns " + t.translation().result().sqlName());
    }
    int nullAsZero = t.nullAsZeroArgument(u);
    if (nullAsZero > 0) {
      return Optional.of("argument " + nullAsZero + " may be null and Spark passes it to " + t.translation().source()
          + ", which reads a null " + t.translation().args().get(nullAsZero - 1).sqlName() + " as 0 (a closure registered "
          + "without input types: with udf(f) or spark.udf.register(name, f) Spark returns null for a null argument "
          + "itself)");
    }
    return Optional.empty();
  }

  private Decision decideKernel(ScalaUDF u, GpuUdf udf, UdfKind kind) {
    String name = name(u);
    GpuKernel k = udf.kernel();
    DataType declared = SparkTypes.result(k.signature());
    if (!u.dataType().equals(declared)) {
      return new Decision(cpu(udf, name, Cause.RESULT_TYPE_DIFFERS, SparkTypes.describe(u.dataType(), declared),
          SparkTypes.describe(declared, u.dataType())), null, kind);
    }
    List<Expression> args = Scala.list(u.children());
    for (int i = 0; i < args.size(); i++) {
      DataType actual = args.get(i).dataType();
      if (!SparkTypes.accepts(k.args().get(i), actual)) { // an array of elements that cannot be null is accepted
        DataType want = SparkTypes.of(k.args().get(i));
        return new Decision(cpu(udf, name, Cause.ARGUMENT_TYPE_DIFFERS, i + 1, k.argNames().get(i),
            SparkTypes.describe(actual, want), SparkTypes.describe(want, actual)), null, kind);
      }
    }
    ColumnKernel kernel = CompiledKernels.compile(k.spec(name), conf);
    if (local) {
      Optional<ExecutorDevice> gpu = ExecutorDevice.current();
      if (gpu.isEmpty()) {
        Optional<String> why = ExecutorDevice.unavailableReason();
        return new Decision(why.isPresent() ? cpu(udf, name, Cause.NO_DEVICE_WHEN_PLANNING, why.get()) : cpu(udf, name, Cause.NO_PLUGIN), kernel, kind);
      }
      Optional<String> missing = kernel.unsupportedOn(gpu.get().device().info());
      if (missing.isPresent()) {
        return new Decision(cpu(udf, name, Cause.FEATURE_MISSING, missing.get()), kernel, kind);
      }
    }
    Placement gpu = Placement.gpu(DecidedBy.PLANNER);
    return new Decision(conf.placement() == PlacementMode.ADAPTIVE ? gpu.adaptively() : gpu, kernel, kind);
  }

  /** The planner's CPU placement, or its error when fallback is off (never for a translated Java UDF). */
  private Placement cpu(GpuUdf udf, String name, Cause cause, Object... details) {
    Placement p = Placement.cpu(cause, DecidedBy.PLANNER, details);
    return udf instanceof TranslatedUdf ? p : p.strict(conf, name); // Spark runs a plain Java UDF either way
  }

  /**
   * Where a call that stays in Spark's operators runs: it is left there (fallback on) or fails the
   * query; a translated Java UDF is left there either way (Spark runs it as it would without vkspark).
   */
  Placement leftover(ScalaUDF u, GpuUdf udf, Placement p) {
    return udf instanceof TranslatedUdf ? p : p.strict(conf, name(u));
  }
}
