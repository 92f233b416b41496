package io.vkspark.spark.api;

import io.vkspark.gpu.GpuException.Code;
import io.vkspark.spark.shim.AnalysisExceptionShim;
import io.vkspark.spark.shim.Scala;

import io.vkspark.gpu.GpuException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * A GPU UDF problem found before anything runs (a wrong argument type, count or body), reported the
 * way Spark reports its own: an {@link org.apache.spark.sql.AnalysisException} with a SQLSTATE and
 * an error condition of Spark's own table, so every Spark client can rebuild it. A Spark Connect
 * client rebuilds an error from its condition and message parameters, looked up in the client's
 * copy of Spark's error-conditions.json, and Spark has no way to add a plugin's conditions there:
 * a condition of vkspark's own would reach the client as {@code INTERNAL_ERROR} with no message.
 * So the condition is {@link #SPARK_CONDITION}, whose message is vkspark's message as is;
 * vkspark's own condition ({@link #vkCondition()}) starts the message and is the message parameter
 * {@code condition}. The {@link GpuException} with the Fix is the cause.
 */
public final class VkAnalysisException extends AnalysisExceptionShim {
  private static final long serialVersionUID = 1L;

  /** vkspark's analysis-time conditions and their SQLSTATEs (the class Spark uses for the like). */
  public enum Condition {
    /** An argument of a type the kernel does not take and Spark cannot cast implicitly (Spark's DATATYPE_MISMATCH). */
    VKSPARK_GPU_UDF_ARGUMENT_TYPE("42K09"),
    /** Called with more or fewer arguments than the kernel declares (Spark's WRONG_NUM_ARGS). */
    VKSPARK_GPU_UDF_WRONG_NUM_ARGS("42605"),
    /** The GLSL body does not compile (a syntax or semantic error in the body; Spark's PARSE_SYNTAX_ERROR class). */
    VKSPARK_GPU_UDF_BODY_DOES_NOT_COMPILE("42601"),
    /** A GLSL-only GPU UDF definition that is not a signature and a body (Spark's PARSE_SYNTAX_ERROR class). */
    VKSPARK_GPU_UDF_INVALID_SIGNATURE("42601"),
    /** The body or kernel uses something vkspark refuses to run (feature not supported). */
    VKSPARK_GPU_UDF_UNSUPPORTED("0A000"),
    /** A GPU UDF class that is not a usable Spark UDF (Spark's INVALID_UDF_IMPLEMENTATION). */
    VKSPARK_GPU_UDF_INVALID_IMPLEMENTATION("38000"),
    /** A GPU UDF named like one of Spark's built-in functions (Spark's ROUTINE_ALREADY_EXISTS). */
    VKSPARK_GPU_UDF_SHADOWS_BUILTIN("42723");

    private final String sqlState;

    Condition(String sqlState) {
      this.sqlState = sqlState;
    }

    public String sqlState() {
      return sqlState;
    }
  }

  /**
   * Spark's condition of every vkspark analysis error: in Spark's table on every line (3.5 to 4.2),
   * an analysis error whose message is its one parameter {@code errorMessage}, printed without a
   * "[condition]" prefix (a legacy condition, so the message keeps vkspark's own prefix).
   */
  public static final String SPARK_CONDITION = "_LEGACY_ERROR_TEMP_1332";

  private final Condition condition;

  private VkAnalysisException(Condition condition, String message, Map<String, String> parameters, GpuException cause) {
    super(message, Scala.map(parameters), cause, SPARK_CONDITION, condition.sqlState());
    this.condition = condition;
  }

  /**
   * {@code condition} about GPU UDF {@code udf}: "[CONDITION] " and {@code cause}'s message, which
   * names the UDF and ends with its Fix (the SQLSTATE is {@link #getSqlState()}). The message
   * parameters (what a Spark Connect client gets back) are that message ({@code errorMessage}), the
   * UDF, vkspark's condition and the SQLSTATE.
   */
  public static VkAnalysisException of(Condition condition, String udf, GpuException cause) {
    String message = "[" + condition.name() + "] " + cause.getMessage();
    Map<String, String> p = new LinkedHashMap<>();
    p.put("errorMessage", message);
    p.put("udf", udf);
    p.put("condition", condition.name());
    p.put("sqlState", condition.sqlState());
    return new VkAnalysisException(condition, message, p, cause);
  }

  /**
   * Throws {@link #of}'s exception. AnalysisException is a checked exception in Java, but Spark (in
   * Scala) throws it from every query method without declaring it; vkspark does the same from the
   * analyzer's rules and function builders. Write {@code throw VkAnalysisException.raise(...)}.
   */
  public static RuntimeException raise(Condition condition, String udf, GpuException cause) {
    throw VkAnalysisException.<RuntimeException>sneaky(of(condition, udf, cause));
  }

  @SuppressWarnings("unchecked")
  private static <T extends Throwable> T sneaky(Throwable t) throws T {
    throw (T) t;
  }

  /** vkspark's own condition (the message starts with it; getCondition is Spark's, see the class comment). */
  public Condition vkCondition() {
    return condition;
  }

  /** Spark 4's SparkThrowable.getCondition (Spark 3.5 has only getErrorClass): no @Override, for every line. */
  public String getCondition() {
    return SPARK_CONDITION;
  }

  @Override
  public String getErrorClass() {
    return SPARK_CONDITION;
  }

  @Override
  public String getSqlState() {
    return condition.sqlState();
  }

  @Override
  public boolean isInternalError() {
    return false;
  }

  /**
   * Runs {@code compile} (a GPU UDF's kernel compiled, as an analysis-time check) and reports its
   * failure as Spark reports analysis errors: a body that does not compile (or not within
   * {@code spark.vkspark.compileTimeout}), or that vkspark refuses, becomes a VkAnalysisException
   * naming the UDF, whose cause names the line. A cancelled wait (CANCELLED) is thrown as it is.
   */
  public static <T> T compiling(String name, Supplier<T> compile) {
    try {
      return compile.get();
    } catch (GpuException e) {
      if (e.code() == Code.TIMEOUT) { // past spark.vkspark.compileTimeout: the body does not compile in time
        throw raise(Condition.VKSPARK_GPU_UDF_BODY_DOES_NOT_COMPILE, name,
            new GpuException(Code.TIMEOUT, "GPU UDF '" + name + "': " + e.getMessage(), e));
      }
      Condition c = switch (e.code()) {
        case COMPILE, INVALID_ARGUMENT -> Condition.VKSPARK_GPU_UDF_BODY_DOES_NOT_COMPILE;
        case UNSUPPORTED -> Condition.VKSPARK_GPU_UDF_UNSUPPORTED;
        default -> null;
      };
      if (c == null) {
        throw e;
      }
      throw raise(c, name, e);
    }
  }
}
