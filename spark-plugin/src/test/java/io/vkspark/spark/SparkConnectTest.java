package io.vkspark.spark;

import io.vkspark.spark.api.VkAnalysisException;

import io.vkspark.spark.plan.VkExplain;
import io.vkspark.spark.exec.VkGpuEvalExec;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.net.ServerSocket;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerEvent;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.QueryExecution;
import org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * vkspark through Spark Connect: a real Connect server (Spark's SparkConnectPlugin beside
 * vkspark's, as {@code spark.plugins} sets them on a server) and the Spark Connect JVM client in a
 * class loader of its own ({@link ConnectClientSession}). Queries sent by the client must run on
 * the GPU (read from the server's executed plans), and every vkspark analysis error must reach the
 * client as Spark's AnalysisException with the UDF, the line and the Fix, not as INTERNAL_ERROR.
 * Runs on the default Spark line (spark-plugin's spark-connect-test profile brings the jars).
 */
final class SparkConnectTest {
  private static final String CLIENT_JAR = System.getProperty("vkspark.connect.client");
  private static final String SHIMS_JAR = System.getProperty("vkspark.connect.shims");
  /** Jars of the test class path the client declares itself; every other Spark jar is the server's. */
  private static final Set<String> CLIENT_SPARK_JARS = Set.of("spark-common-utils_", "spark-common-utils-java_",
      "spark-unsafe_", "spark-variant_", "spark-sketch_", "spark-tags_");

  private static final Logger LOG = LoggerFactory.getLogger(SparkConnectTest.class);

  private static SparkSession server;
  private static URLClassLoader clientLoader;
  /**
   * The one thread that makes client calls: the client keeps inheritable thread-locals of its own
   * class loader on the calling thread, which every thread started from it later would inherit.
   */
  private static ExecutorService clientThread;
  private static Function<String, List<String>> client;
  private static final ConcurrentLinkedQueue<QueryExecution> executions = new ConcurrentLinkedQueue<>();

  @BeforeAll
  @SuppressWarnings("unchecked")
  static void startServerAndClient() throws Exception {
    assumeTrue(CLIENT_JAR != null && !CLIENT_JAR.startsWith("${"),
        "the Spark Connect jars come with spark-plugin's spark-connect-test profile (default Spark line only)");
    TestSpark.stop(); // one SparkContext per JVM: the server's
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    server = TestSpark.builder()
        .config("spark.plugins", "org.apache.spark.sql.connect.SparkConnectPlugin," + VkSparkPlugin.class.getName())
        .config("spark.connect.grpc.binding.address", "127.0.0.1")
        .config("spark.connect.grpc.binding.port", String.valueOf(port))
        .getOrCreate();
    server.sparkContext().addSparkListener(new SparkListener() {
      @Override
      public void onOtherEvent(SparkListenerEvent event) {
        if (event instanceof SparkListenerSQLExecutionEnd end && end.qe() != null) {
          executions.add(end.qe());
        }
      }
    });
    LOG.info("Spark Connect test: server on port {}", port);

    clientLoader = new URLClassLoader(clientClassPath(), ClassLoader.getPlatformClassLoader());
    clientThread = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "spark-connect-test-client");
      t.setDaemon(true);
      t.setContextClassLoader(clientLoader);
      return t;
    });
    client = onClientThread(() -> (Function<String, List<String>>) clientLoader
        .loadClass(ConnectClientSession.class.getName()).getConstructor(String.class).newInstance("sc://127.0.0.1:" + port));
    sql("CREATE TEMPORARY VIEW t AS SELECT id, CAST(id % 1000 - 500 AS INT) AS i, CAST(id % 7 AS INT) AS j, "
        + "CAST(id AS DOUBLE) / 4 AS a, id % 2 = 0 AS p FROM range(0, 2000, 1, 2)");
    LOG.info("Spark Connect test: client connected");
  }

  /** {@code query} through the client, on the client's thread; the client's exception as is. */
  private static List<String> sql(String query) {
    return onClientThread(() -> client.apply(query));
  }

  private static <T> T onClientThread(Callable<T> call) {
    try {
      return clientThread.submit(call).get();
    } catch (ExecutionException e) {
      throw SparkConnectTest.<RuntimeException>sneaky(e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  /** The client jar, its shims and its dependencies from the test class path, without the server's Spark. */
  private static URL[] clientClassPath() throws Exception {
    // This class's own folder or jar (target/test-classes under Maven, spark-plugin-tests.jar in
    // scripts/kit-suite.sh) holds ConnectClientSession; vkspark's other classes need the server's Spark.
    File tests = new File(SparkConnectTest.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    List<URL> urls = new ArrayList<>(List.of(new File(CLIENT_JAR).toURI().toURL(), new File(SHIMS_JAR).toURI().toURL(),
        tests.toURI().toURL()));
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      File f = new File(entry);
      String name = f.getName();
      boolean serverSpark = name.startsWith("spark-") && CLIENT_SPARK_JARS.stream().noneMatch(name::startsWith);
      boolean vkspark = f.isDirectory() || name.startsWith("vkspark-") || f.getAbsoluteFile().equals(tests.getAbsoluteFile());
      if (!serverSpark && !vkspark) {
        urls.add(f.toURI().toURL());
      }
    }
    return urls.toArray(URL[]::new);
  }

  /**
   * Stops the server (Spark's stop ends its Connect service). The client session is left open: its
   * close asks the server to release the session, which needs spark-mllib (not on this class path;
   * a Spark distribution has it). The client loader is left to the garbage collector: the client's
   * gRPC threads outlive its session.
   */
  @AfterAll
  static void stop() {
    if (clientThread != null) {
      clientThread.shutdownNow();
    }
    if (server != null) {
      server.stop();
    }
  }

  @Test
  void glslOnlyUdf_vksparkDefine_javaGpuUdf_andExplain_runOnTheGpu() {
    assertEquals(List.of("[double cx_scale(double x)]"),
        sql("SELECT vkspark_define('double cx_scale(double x) { return x * 2.0 + 1.0; }')"));
    String query = "SELECT id, glsl_file_mix(i, j), i * 3 - j, int_poly(i, j), i * 3 + j, cx_scale(a), a * 2.0 + 1.0 "
        + "FROM t";
    List<String> rows = onGpu(() -> sql(query));
    assertEquals(2_000, rows.size());
    for (String row : rows) {
      String[] c = row.substring(1, row.length() - 1).split(",");
      assertEquals(c[2], c[1], () -> "glsl_file_mix (GLSL-only, spark.vkspark.glsl) in " + row);
      assertEquals(c[4], c[3], () -> "int_poly (Java GPU UDF, spark.vkspark.functions) in " + row);
      assertEquals(c[6], c[5], () -> "cx_scale (vkspark_define) in " + row);
    }

    String plan = String.join("\n", sql("EXPLAIN " + query));
    assertTrue(plan.contains("VkGpuEval [glsl_file_mix(i#"), plan);
    assertTrue(plan.contains("int_poly(i#") && plan.contains("cx_scale(a#"), plan);
    assertTrue(plan.contains("on GPU"), plan);
  }

  @Test
  void analysisErrors_reachTheClient_asAnalysisExceptions_withUdfLineAndFix() {
    assertClientError("SELECT vkspark_define('double cx_bad(double x) {\n  double y = x;\n  return y +* 2.0;\n}')",
        "VKSPARK_GPU_UDF_BODY_DOES_NOT_COMPILE", "'cx_bad'", "line 3 of its body");
    assertClientError("SELECT vkspark_define('dbl cx_sig(double x)', 'x')",
        "VKSPARK_GPU_UDF_INVALID_SIGNATURE", "'cx_sig'", "vkspark_define line 1", "dbl");
    assertClientError("SELECT vkspark_define('double sqrt(double x) { return x; }')",
        "VKSPARK_GPU_UDF_SHADOWS_BUILTIN", "'sqrt'");
    assertClientError("SELECT gpu_hypot(a) FROM t",
        "VKSPARK_GPU_UDF_WRONG_NUM_ARGS", "'gpu_hypot'", "called with 1");
    assertClientError("SELECT gpu_hypot(a, p) FROM t",
        "VKSPARK_GPU_UDF_ARGUMENT_TYPE", "'gpu_hypot'", "Fix: write CAST(t.p AS DOUBLE)");
    assertClientError("SELECT vkspark_define('int cx_rem(int a, int b) { return a % b; }')",
        "VKSPARK_GPU_UDF_BODY_DOES_NOT_COMPILE", "'cx_rem'", "uses % at line 1", "jrem(a, b)");
  }

  /**
   * {@code query} fails in the client with Spark's AnalysisException, built by the client (its
   * class loader's class), whose message is vkspark's: the condition, {@code says}, and a Fix.
   */
  private static void assertClientError(String query, String vkCondition, String... says) {
    Throwable e = assertThrows(Throwable.class, () -> sql(query));
    assertEquals("org.apache.spark.sql.AnalysisException", e.getClass().getName(), () -> TestSpark.messages(e));
    assertSame(clientLoader, e.getClass().getClassLoader());
    String message = e.getMessage();
    assertFalse(message.contains("INTERNAL_ERROR"), message);
    assertTrue(message.startsWith("[" + vkCondition + "] "), message);
    for (String s : says) {
      assertTrue(message.contains(s), () -> "'" + s + "' in: " + message);
    }
    assertTrue(message.contains(" Fix: "), message);
    assertEquals(VkAnalysisException.SPARK_CONDITION, sparkThrowable(e, "getCondition"), message);
    Map<?, ?> parameters = (Map<?, ?>) sparkThrowable(e, "getMessageParameters");
    assertEquals(vkCondition, parameters.get("condition"), parameters::toString);
    assertEquals(VkAnalysisException.Condition.valueOf(vkCondition).sqlState(), parameters.get("sqlState"),
        parameters::toString);
  }

  @SuppressWarnings("unchecked")
  private static <T extends Throwable> T sneaky(Throwable t) throws T {
    throw (T) t;
  }

  private static Object sparkThrowable(Throwable e, String method) {
    try {
      return Class.forName("org.apache.spark.SparkThrowable", false, clientLoader).getMethod(method).invoke(e);
    } catch (ReflectiveOperationException x) {
      throw new AssertionError(x);
    }
  }

  /**
   * Runs {@code body} (a client query) and asserts the server ran it with VkGpuEval nodes, every
   * row on the GPU: the executed plan comes from the server's SQL execution events.
   */
  private static <T> T onGpu(Supplier<T> body) {
    executions.clear();
    T result = body.get();
    long deadline = System.nanoTime() + 60_000_000_000L;
    QueryExecution qe = null;
    while (qe == null && System.nanoTime() < deadline) {
      qe = executions.stream().filter(q -> !nodes(q).isEmpty()).findFirst().orElse(null);
      if (qe == null) {
        try {
          Thread.sleep(20);
        } catch (InterruptedException x) {
          Thread.currentThread().interrupt();
          throw new AssertionError(x);
        }
      }
    }
    assertNotNull(qe, () -> "no server execution with a VkGpuEval node among " + executions.size());
    for (VkGpuEvalExec node : nodes(qe)) {
      Map<String, Long> m = TestSpark.metrics(node);
      assertTrue(m.get("gpuRows") > 0, () -> "no rows on the GPU in " + node.simpleString(200) + ": " + m);
      assertEquals(0L, m.get("cpuRows"), () -> "rows on the CPU in " + node.simpleString(200) + ": " + m);
    }
    return result;
  }

  private static List<VkGpuEvalExec> nodes(QueryExecution qe) {
    List<VkGpuEvalExec> out = new ArrayList<>();
    VkExplain.visit(qe.executedPlan(), p -> {
      if (p instanceof VkGpuEvalExec g) {
        out.add(g);
      }
    });
    return out;
  }
}
