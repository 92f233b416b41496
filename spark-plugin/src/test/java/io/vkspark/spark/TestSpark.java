package io.vkspark.spark;

import io.vkspark.spark.exec.call.VkMetric;
import io.vkspark.spark.executor.ExecutorDevice;
import io.vkspark.spark.exec.GpuEvalIterator;
import io.vkspark.spark.api.GpuUdfs;
import io.vkspark.spark.javaudfs.BlackScholesCall;
import io.vkspark.spark.shim.SparkShim;
import io.vkspark.spark.conf.VkConf;
import io.vkspark.spark.plan.VkExplain;
import io.vkspark.spark.exec.VkGpuEvalExec;
import io.vkspark.spark.shim.Scala;
import io.vkspark.spark.conf.Settings;
import io.vkspark.spark.cache.VkCacheSerializer;

import static org.junit.jupiter.api.Assertions.*;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.apache.spark.SparkConf;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.RuntimeConfig;
import org.apache.spark.sql.execution.SimpleMode$;
import org.apache.spark.sql.execution.columnar.InMemoryRelation$;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The shared local-mode SparkSession of the integration tests: a real Spark with the plugin as a
 * user would set it ({@code spark.plugins} only, plus the validation layer), on lavapipe in CI.
 * Fallback is off, so a GPU UDF that cannot run on the GPU fails its test instead of passing on the
 * CPU; tests about fallback switch it on with {@link #withFallback}. Placement is {@code gpu}, so
 * adaptive placement never moves a batch the tests expect on the GPU; tests of adaptive placement
 * set {@code spark.vkspark.placement=adaptive} themselves.
 */
public final class TestSpark {
  /** Two GPU UDF classes and a plain Java UDF class (SQL name black_scholes_call, translated to the GPU). */
  public static final String FUNCTIONS = TestUdfs.IntPoly.class.getName() + "," + TestUdfs.GpuHypot.class.getName()
      + "," + BlackScholesCall.class.getName();
  /** GLSL-only UDFs of every test session (spark.vkspark.glsl): glsl_file_mix, glsl_file_widen. */
  public static final String GLSL_FILE = glslFile();

  /** The test resource as a file (copied out of the classpath: the tests also run from jars, e.g. on the H200). */
  private static String glslFile() {
    try (InputStream in = TestSpark.class.getResourceAsStream("/vkspark-test.glsl")) {
      Path f = Files.createTempFile("vkspark-test", ".glsl");
      f.toFile().deleteOnExit();
      Files.copy(Objects.requireNonNull(in, "vkspark-test.glsl on the test classpath"), f,
          StandardCopyOption.REPLACE_EXISTING);
      return f.toString();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
  private static SparkSession spark;
  private static Path parquet;

  private TestSpark() {}

  public static synchronized SparkSession spark() {
    if (spark == null) {
      spark = registerTestUdfs(builder().getOrCreate());
    }
    return spark;
  }

  /** Registers {@link TestUdfs}' GPU UDFs (and {@code hypot_gpu}, a plain Java UDF) in {@code s}: every test session's functions. */
  public static SparkSession registerTestUdfs(SparkSession s) {
    GpuUdfs.register(s, "long_mix", new TestUdfs.LongMix());
    GpuUdfs.register(s, "float_saxpy", new TestUdfs.FloatSaxpy());
    GpuUdfs.register(s, "xor_gpu", new TestUdfs.Xor());
    GpuUdfs.register(s, "is_positive", new TestUdfs.IsPositive());
    GpuUdfs.register(s, "add_days", new TestUdfs.AddDays());
    GpuUdfs.register(s, "add_hours", new TestUdfs.AddHours());
    s.udf().register("hypot_gpu", new TestUdfs.GpuHypot(), DataTypes.DoubleType);
    return s;
  }

  /** The shared session's builder: the plugin as a user sets it, validation on, fallback off. */
  public static SparkSession.Builder builder() {
    return SparkSession.builder()
        .master("local[4,3]")
        .appName("vkspark-tests")
        .config("spark.plugins", VkSparkPlugin.class.getName())
        .config("spark.vkspark.validation", "true")
        .config("spark.vkspark.fallback", "false")
        .config("spark.vkspark.placement", "gpu") // every row where a test asserts it (adaptive: AdaptivePlacementSparkTest)
        .config("spark.vkspark.shaderCacheDir", Path.of("target", "shader-cache").toAbsolutePath().toString())
        .config("spark.vkspark.functions", FUNCTIONS)
        .config("spark.vkspark.glsl", GLSL_FILE)
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1");
  }

  /** Stops the shared session (a test that needs its own SparkContext); the next {@link #spark()} builds a new one. */
  public static synchronized void stop() {
    if (spark != null) {
      spark.stop();
      spark = null;
    }
  }

  /**
   * A builder of a session of its own with vkspark's cache serializer: the shared session is stopped
   * first, and the JVM's cache serializer forgotten, since {@code spark.sql.cache.serializer} is read
   * once per JVM (all test classes share one JVM when run from jars, as on the H200). Stop it with
   * {@link #stopCacheSession}.
   */
  static SparkSession.Builder cacheSessionBuilder() {
    stop();
    InMemoryRelation$.MODULE$.clearSerializer();
    return builder().config("spark.sql.cache.serializer", VkCacheSerializer.class.getName());
  }

  /** Stops a session of {@link #cacheSessionBuilder} (null: none) and forgets its cache serializer for the next. */
  static void stopCacheSession(SparkSession session) {
    if (session != null) {
      session.stop();
    }
    InMemoryRelation$.MODULE$.clearSerializer();
  }

  /** The settings of {@code base} with {@code overrides} set over them. */
  static VkConf confWith(SparkConf base, Map<String, String> overrides) {
    return VkConf.from(k -> overrides.containsKey(k) ? overrides.get(k) : base.contains(k) ? base.get(k) : null);
  }

  /** Runs {@code body} with this JVM's device closed and unopenable, as on an executor without Vulkan. */
  public static void withoutDevice(Runnable body) {
    SparkSession s = spark();
    VkConf good = VkConf.from(s.sparkContext().conf());
    ExecutorDevice.shutdown();
    ExecutorDevice.init(confWith(s.sparkContext().conf(), Map.of(Settings.DEVICE.key(), "no-such-gpu",
        Settings.FALLBACK.key(), "true", Settings.VALIDATION.key(), "false", Settings.DEVICE_MEMORY_LIMIT.key(), "0")),
        "driver", null);
    try {
      assertTrue(ExecutorDevice.current().isEmpty());
      body.run();
    } finally {
      ExecutorDevice.shutdown();
      ExecutorDevice.init(good, "driver", null);
    }
    assertTrue(ExecutorDevice.current().isPresent());
  }

  /** Every message of {@code t} and its causes, one per line (Spark wraps task failures). */
  public static String messages(Throwable t) {
    StringBuilder s = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      s.append(c).append('\n');
    }
    return s.toString();
  }

  /** Runs {@code body} with {@code spark.vkspark.fallback=true} in the shared session, then sets it back to false. */
  public static void withFallback(Runnable body) {
    SparkSession s = spark();
    s.conf().set(Settings.FALLBACK.key(), "true");
    try {
      body.run();
    } finally {
      s.conf().set(Settings.FALLBACK.key(), "false");
    }
  }

  /**
   * A Parquet table of 20,000 rows in 12 files, every type with about 10% nulls: columns id, i, j
   * (int), l, m (bigint), f, g (float), a, b (double), p, q (boolean), d (date), t (timestamp).
   */
  public static synchronized String parquet() {
    if (parquet == null) {
      try {
        parquet = Files.createTempDirectory("vkspark-test").resolve("data.parquet");
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      spark().range(0, 20_000, 1, 12).selectExpr(
          "id",
          nullable("cast(rand(1) * 2000000 - 1000000 as int)", 11) + " as i",
          nullable("cast(rand(2) * 2000 as int)", 12) + " as j",
          nullable("cast(rand(3) * 9e15 as bigint)", 13) + " as l",
          nullable("cast(rand(4) * 1e12 - 5e11 as bigint)", 14) + " as m",
          nullable("cast(rand(5) * 2000 - 1000 as float)", 15) + " as f",
          nullable("cast(rand(6) * 100 as float)", 16) + " as g",
          nullable("rand(7) * 2e6 - 1e6", 17) + " as a",
          nullable("randn(8) * 1e3", 18) + " as b",
          nullable("rand(9) < 0.5", 19) + " as p",
          nullable("rand(10) < 0.3", 20) + " as q",
          nullable("date_add(date'2000-01-01', cast(rand(21) * 10000 as int))", 22) + " as d",
          nullable("timestamp_micros(946684800000000 + cast(rand(23) * 9.4e14 as bigint))", 24) + " as t")
          .write().parquet(parquet.toString());
    }
    return parquet.toString();
  }

  /** The table of {@link #parquet()}, read in the shared session. */
  public static Dataset<Row> table() {
    return spark().read().parquet(parquet());
  }

  private static String nullable(String expr, int seed) {
    return "CASE WHEN rand(" + (100 + seed) + ") < 0.1 THEN NULL ELSE " + expr + " END";
  }

  /**
   * Runs {@code query} with vkspark on and off; returns {GPU rows, CPU rows}, sorted by column 0. The
   * run with vkspark on must have had every row of every VkGpuEval node on the GPU
   * ({@link #assertAllRowsOnGpu}): results that agree prove nothing if the GPU never ran.
   */
  public static List<List<Row>> gpuAndCpu(Supplier<Dataset<Row>> query) {
    return onAndOff(query, TestSpark::assertAllRowsOnGpu);
  }

  /**
   * Runs {@code query} with vkspark on, checks that run with {@code check}, then with vkspark off
   * (Spark's own CPU plan, in the query's session); returns {vkspark rows, CPU rows}, sorted by column 0.
   */
  public static List<List<Row>> onAndOff(Supplier<Dataset<Row>> query, Consumer<Dataset<Row>> check) {
    Dataset<Row> on = query.get();
    SparkSession s = on.sparkSession();
    List<Row> gpu = sorted(on.collectAsList());
    gpuNodes(on).forEach(TestSpark::metrics); // every node's CPU rows have their causes
    check.accept(on);
    String was = s.conf().get(Settings.ENABLED.key(), "true");
    s.conf().set(Settings.ENABLED.key(), "false");
    try {
      Dataset<Row> off = query.get();
      assertTrue(gpuNodes(off).isEmpty(), () -> "the CPU run has no VkGpuEval node: " + explain(off));
      List<Row> cpu = sorted(off.collectAsList());
      return List.of(gpu, cpu);
    } finally {
      s.conf().set(Settings.ENABLED.key(), was);
    }
  }

  /** Asserts the GPU and CPU runs of {@code query} agree (floats within a few ulps), every row on the GPU. */
  public static void assertGpuEqualsCpu(Supplier<Dataset<Row>> query) {
    List<List<Row>> both = gpuAndCpu(query);
    assertRowsEqual(both.get(1), both.get(0));
  }

  /**
   * For fallback tests: {@code query} with vkspark on (where calls may run on the CPU) agrees with
   * Spark's CPU plan; {@code check} sees the executed vkspark run (to assert where rows ran).
   */
  public static void assertVksparkEqualsCpu(Supplier<Dataset<Row>> query, Consumer<Dataset<Row>> check) {
    List<List<Row>> both = onAndOff(query, check);
    assertRowsEqual(both.get(1), both.get(0));
  }

  /**
   * Equal, except doubles within 1e-12 relative: a sum of doubles depends on its order, which Spark does not
   * define: a GPU reduction adds in its own order, and Spark's final aggregation adds the partitions'
   * partial sums in the order they arrive. Zeros and NaN compare exactly.
   */
  public static void assertAggregatesEqual(List<Row> expected, List<Row> actual) {
    assertEquals(expected.size(), actual.size(), "row count");
    for (int r = 0; r < expected.size(); r++) {
      for (int c = 0; c < expected.get(r).size(); c++) {
        Object x = expected.get(r).get(c);
        Object y = actual.get(r).get(c);
        String where = "row " + r + " column " + c + ": " + expected.get(r) + " vs " + actual.get(r);
        if (x instanceof Double dx && y instanceof Double dy && dx != 0 && !dx.isNaN()) {
          assertEquals(dx, dy, Math.abs(dx) * 1e-12, where);
        } else {
          assertEquals(x, y, where);
        }
      }
    }
  }

  public static void assertRowsEqual(List<Row> expected, List<Row> actual) {
    assertEquals(expected.size(), actual.size(), "row count");
    for (int r = 0; r < expected.size(); r++) {
      Row e = expected.get(r);
      Row a = actual.get(r);
      assertEquals(e.size(), a.size());
      for (int c = 0; c < e.size(); c++) {
        Object x = e.get(c);
        Object y = a.get(c);
        String where = "row " + r + " column " + c + " (" + e + " vs " + a + ")";
        if (x instanceof Double dx && y instanceof Double dy) {
          assertTrue(Math.abs(dx - dy) <= 4 * Math.ulp(dx) || dx.equals(dy), where);
        } else if (x instanceof Float fx && y instanceof Float fy) {
          // Test data stays within +-1000; a GPU may fuse a multiply-add, rounding once where Java rounds twice.
          assertTrue(Math.abs(fx - fy) <= 8 * Math.ulp(Math.max(Math.abs(fx), 1000f)) || fx.equals(fy), where);
        } else {
          assertEquals(x, y, where);
        }
      }
    }
  }

  private static List<Row> sorted(List<Row> rows) {
    List<Row> out = new ArrayList<>(rows);
    out.sort(Comparator.comparing((Row r) -> r.isNullAt(0) ? "" : String.valueOf(r.get(0))));
    return out;
  }

  /** The executed plan's VkGpuEvalExec nodes (inside adaptive plans too). */
  public static List<VkGpuEvalExec> gpuNodes(Dataset<Row> df) {
    List<VkGpuEvalExec> out = new ArrayList<>();
    VkExplain.visit(df.queryExecution().executedPlan(), p -> {
      if (p instanceof VkGpuEvalExec g) {
        out.add(g);
      }
    });
    return out;
  }

  /**
   * {@code executed} (a Dataset that has run) has VkGpuEval nodes, and each ran rows on the GPU
   * ({@code gpuRows > 0}) and none on the CPU ({@code cpuRows == 0}); every node is checked, inside
   * adaptive query stages and subqueries too.
   */
  public static void assertAllRowsOnGpu(Dataset<Row> executed) {
    List<VkGpuEvalExec> nodes = gpuNodes(executed);
    assertFalse(nodes.isEmpty(), () -> "no VkGpuEval node: " + explain(executed));
    for (VkGpuEvalExec node : nodes) {
      Map<String, Long> m = metrics(node);
      assertTrue(m.get("gpuRows") > 0, () -> "no rows ran on the GPU in " + node.simpleString(200) + ": " + m);
      assertEquals(0L, m.get("cpuRows"), () -> "rows ran on the CPU in " + node.simpleString(200) + ": " + m);
    }
  }

  /**
   * Every batch of {@code executed}'s GPU nodes ran on the GPU: the only rows computed with
   * {@code call()} are single rows their kernels handed back ({@code cpuRowsHandedBack}, a string
   * not ASCII, say).
   */
  public static void assertOnGpuExceptHandedBackRows(Dataset<Row> executed) {
    List<VkGpuEvalExec> nodes = gpuNodes(executed);
    assertFalse(nodes.isEmpty(), () -> "no VkGpuEval node: " + explain(executed));
    for (VkGpuEvalExec node : nodes) {
      Map<String, Long> m = metrics(node);
      assertTrue(m.get("gpuRows") > 0, () -> "no rows ran on the GPU in " + node.simpleString(200) + ": " + m);
      assertEquals(m.get("cpuRowsHandedBack"), m.get("cpuRows"),
          () -> "rows ran on the CPU other than those handed back in " + node.simpleString(200) + ": " + m);
    }
  }

  /**
   * The node's metrics by key, after checking that its {@code cpuRows*} causes add up to
   * {@code cpuRows} (every row run with {@code call()} has its cause; see docs/METRICS.md).
   */
  public static Map<String, Long> metrics(VkGpuEvalExec node) {
    Map<String, Long> m = GpuEvalIterator.snapshot(node.metricsMap());
    assertCausesAddUp(node.simpleString(200), m);
    return m;
  }

  /** {@code m}'s {@code cpuRows*} causes add up to its {@code cpuRows}: no CPU row without a cause. */
  public static void assertCausesAddUp(String node, Map<String, Long> m) {
    long causes = 0;
    for (VkMetric c : VkMetric.cpuRowCauses()) {
      causes += m.getOrDefault(c.key(), 0L);
    }
    assertEquals(m.get("cpuRows"), causes, "the cpuRows* causes add up to cpuRows in " + node + ": " + m);
  }

  public static String explain(Dataset<Row> df) {
    String plan = df.queryExecution().explainString(SimpleMode$.MODULE$);
    // Spark 3.5 has no extended explain providers: add the section Spark 4 shows, from the same generator.
    return SparkShim.EXTENDED_EXPLAIN ? plan
        : plan + "\n== Extended Information (vkspark) ==\n" + new VkExplain().generateExtendedInfo(df.queryExecution().executedPlan());
  }

  /** The validation layer found nothing on the executor's device. */
  public static void assertNoValidationErrors() {
    ExecutorDevice.current().ifPresent(g -> assertEquals(0, g.device().validationErrors(),
        () -> "validation errors: " + g.device().validationMessages()));
  }

  public static SparkPlan plan(Dataset<Row> df) {
    return df.queryExecution().executedPlan();
  }

  /**
   * The check every Spark test class ends with, as an extension ({@code @ExtendWith(TestSpark.Validated.class)}):
   * after its last test (and its own {@code @AfterAll}), the validation layer found nothing on the
   * executor's device ({@link #assertNoValidationErrors}).
   */
  public static final class Validated implements AfterAllCallback {
    @Override
    public void afterAll(ExtensionContext context) {
      assertNoValidationErrors();
    }
  }

  /**
   * Each test leaves the shared session's SQL settings as it found them
   * ({@code @ExtendWith(TestSpark.RestoresConf.class)}): what a test set is unset or set back after
   * it, so no test runs under another's settings and no class keeps a list of keys to reset.
   */
  public static final class RestoresConf implements BeforeEachCallback, AfterEachCallback {
    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(RestoresConf.class);

    @Override
    public void beforeEach(ExtensionContext context) {
      context.getStore(NS).put("conf", settings(spark().conf()));
    }

    @Override
    @SuppressWarnings("unchecked")
    public void afterEach(ExtensionContext context) {
      Map<String, String> before = context.getStore(NS).remove("conf", Map.class);
      RuntimeConfig conf = spark().conf();
      Map<String, String> now = settings(conf);
      for (String k : now.keySet()) { // static settings never change, so only runtime ones are touched
        if (!before.containsKey(k)) {
          conf.unset(k);
        }
      }
      before.forEach((k, v) -> {
        if (!v.equals(now.get(k))) {
          conf.set(k, v);
        }
      });
    }

    private static Map<String, String> settings(RuntimeConfig conf) {
      return new HashMap<>(Scala.javaMap(conf.getAll()));
    }
  }
}
