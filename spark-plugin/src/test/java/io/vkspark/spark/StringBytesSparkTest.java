package io.vkspark.spark;

import io.vkspark.gpu.DeviceType;
import io.vkspark.gpu.vulkan.GpuDevices;
import io.vkspark.spark.executor.CpuVulkan;
import io.vkspark.spark.api.GpuKernel;
import io.vkspark.spark.api.GpuUdf;
import io.vkspark.spark.api.GpuUdfs;
import io.vkspark.spark.conf.Settings;

import static io.vkspark.spark.TestSpark.*;
import static org.junit.jupiter.api.Assertions.*;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.api.java.UDF1;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Ill-formed UTF-8 in a {@code string} argument ({@code CAST(binary AS STRING)}, files Spark does
 * not validate) means the same on every path: the body sees the UTF-8 of the Java String
 * {@code call()} gets, each ill-formed sequence as U+FFFD ({@code EF BF BD}). Checked on the GPU
 * against call(), under strict verify, in the node without a device, and for a GLSL-only UDF on
 * lavapipe; every row's length is also checked against Java's decoding of the stored bytes.
 */
@ExtendWith(TestSpark.Validated.class)
final class StringBytesSparkTest {
  private static String table;

  /** The length in UTF-8 bytes of the String call() gets. */
  public static final class Utf8Length implements UDF1<String, Integer>, GpuUdf {
    @Override
    public Integer call(String s) {
      return s == null ? null : s.getBytes(StandardCharsets.UTF_8).length;
    }

    @Override
    public GpuKernel kernel() {
      return GpuKernel.returns("int").arg("s", "string").body("s_length()");
    }
  }

  @BeforeAll
  static void data() throws Exception {
    GpuUdfs.register(spark(), "bytes_fnv", new VarTypesSparkTest.Fnv1a());
    GpuUdfs.register(spark(), "bytes_len", new Utf8Length());
    table = Files.createTempDirectory("vkspark-stringbytes").resolve("t.parquet").toString();
    // a lone FF, a lone continuation byte, a truncated euro sign, an overlong '/', a surrogate, past U+10FFFF,
    // ill-formed bytes inside valid text, valid text, empty and null
    spark().range(0, 4000, 1, 3).selectExpr("id", "unhex(CASE CAST(id % 11 AS int) WHEN 0 THEN 'FF' WHEN 1 THEN '80'"
            + " WHEN 2 THEN 'E282' WHEN 3 THEN 'C0AF' WHEN 4 THEN 'EDA080' WHEN 5 THEN 'F4908080'"
            + " WHEN 6 THEN concat(hex('Grüße '), 'FF', hex(concat(' 名前 🎉 ', id)), 'E282')"
            + " WHEN 7 THEN hex(concat('ok ', id)) WHEN 8 THEN '' WHEN 9 THEN NULL ELSE concat(hex(concat('n', id)), 'C0') END) AS raw")
        .selectExpr("id", "raw", "CAST(raw AS STRING) AS s")
        .write().parquet(table);
  }


  private static Supplier<Dataset<Row>> query() {
    return () -> spark().read().parquet(table).selectExpr("id", "bytes_fnv(s) AS h", "bytes_len(s) AS n");
  }

  /** The stored bytes of each row, by id. */
  private static Map<Long, byte[]> raw() {
    Map<Long, byte[]> out = new HashMap<>();
    for (Row r : spark().read().parquet(table).select("id", "raw").collectAsList()) {
      out.put(r.getLong(0), r.isNullAt(1) ? null : (byte[]) r.get(1));
    }
    return out;
  }

  /** Each row's length is that of Java's decoding of its stored bytes; some differ from the stored length. */
  private static void assertDecodedLengths(List<Row> rows, int column) {
    Map<Long, byte[]> raw = raw();
    int differ = 0;
    for (Row r : rows) {
      byte[] b = raw.get(r.getLong(0));
      Integer want = b == null ? null : new String(b, StandardCharsets.UTF_8).getBytes(StandardCharsets.UTF_8).length;
      assertEquals(want, r.isNullAt(column) ? null : r.getInt(column), () -> "row " + r);
      differ += b != null && want != b.length ? 1 : 0;
    }
    assertTrue(differ > 2000, "rows holding ill-formed UTF-8: " + differ);
    Row ff = rows.stream().filter(r -> r.getLong(0) == 0).findFirst().orElseThrow();
    assertEquals(3, ff.getInt(column), "the byte FF is U+FFFD, EF BF BD");
  }

  @Test
  void illFormedUtf8_onGpu_bodySeesWhatCallGets() {
    List<List<Row>> both = gpuAndCpu(query()); // every row on the GPU (asserted), then Spark's plan running call()
    assertRowsEqual(both.get(1), both.get(0));
    assertDecodedLengths(both.get(0), 2);
  }

  @Test
  void illFormedUtf8_strictVerify_findsNoMismatch() {
    spark().conf().set(Settings.VERIFY.key(), "strict");
    spark().conf().set(Settings.VERIFY_SAMPLE_RATE.key(), "1");
    try {
      Dataset<Row> df = query().get();
      List<Row> rows = df.collectAsList();
      assertAllRowsOnGpu(df);
      Map<String, Long> m = metrics(gpuNodes(df).get(0));
      assertTrue(m.get("verifyRows") >= 2 * 3600, m::toString); // both calls, rows with a null argument skip call()
      assertEquals(0L, m.get("verifyMismatches"), m::toString);
      assertDecodedLengths(rows, 2);
    } finally {
      spark().conf().unset(Settings.VERIFY.key());
      spark().conf().unset(Settings.VERIFY_SAMPLE_RATE.key());
    }
  }

  @Test
  void illFormedUtf8_withoutDevice_callInTheNode_sameRows() {
    List<Row> gpu = query().get().collectAsList();
    withFallback(() -> withoutDevice(() -> {
      Dataset<Row> df = query().get();
      List<Row> cpu = df.collectAsList();
      Map<String, Long> m = metrics(gpuNodes(df).get(0));
      assertEquals(0L, m.get("gpuRows"), m::toString);
      assertTrue(m.get("cpuRows") >= 4000L, m::toString);
      assertRowsEqual(sortedById(gpu), sortedById(cpu));
      assertDecodedLengths(cpu, 2);
    }));
  }

  @Test
  void illFormedUtf8_glslOnly_onGpu_andOnLavapipe() {
    spark().sql("SELECT vkspark_define('int glsl_utf8_len(string s) { return s_length(); }')").collectAsList();
    String q = "SELECT id, 0, glsl_utf8_len(s) AS n FROM parquet.`" + table + "`";
    Dataset<Row> df = spark().sql(q);
    List<Row> rows = df.collectAsList();
    assertAllRowsOnGpu(df);
    assertDecodedLengths(rows, 2);
    boolean lavapipe = GpuDevices.list().stream().anyMatch(d -> d.type() == DeviceType.CPU);
    if (!lavapipe) {
      return; // a GPU host without Mesa: GlslUdfSqlTest covers what it says
    }
    withFallback(() -> withoutDevice(() -> { // the same SPIR-V on the CPU Vulkan device, staged by the node
      Dataset<Row> cpu = spark().sql(q);
      List<Row> got = cpu.collectAsList();
      Map<String, Long> m = metrics(gpuNodes(cpu).get(0));
      assertEquals(4000L, m.get("cpuVulkanRows"), m::toString);
      assertDecodedLengths(got, 2);
    }));
    // call() of a GLSL-only UDF, which Spark evaluates itself here: one row at a time on the JVM's
    // own device (lavapipe here, the executor's GPU where it has one)
    long before = CpuVulkan.rows() + CpuVulkan.ownDeviceRows();
    List<Row> local = spark().sql("SELECT k, glsl_utf8_len(s) FROM VALUES (1, CAST(X'FF' AS STRING)),"
        + " (2, CAST(X'41E282' AS STRING)), (3, CAST(X'EDA080' AS STRING)) AS t(k, s) ORDER BY k").collectAsList();
    assertEquals(3, CpuVulkan.rows() + CpuVulkan.ownDeviceRows() - before, "each row on a Vulkan device");
    byte[][] stored = {{(byte) 0xFF}, {0x41, (byte) 0xE2, (byte) 0x82}, {(byte) 0xED, (byte) 0xA0, (byte) 0x80}};
    for (int k = 0; k < 3; k++) {
      assertEquals(new String(stored[k], StandardCharsets.UTF_8).getBytes(StandardCharsets.UTF_8).length,
          local.get(k).getInt(1), () -> local.toString());
    }
  }

  private static List<Row> sortedById(List<Row> rows) {
    return rows.stream().sorted(Comparator.comparingLong(r -> r.getLong(0))).toList();
  }
}
