package io.vkspark.spark;

import static io.vkspark.spark.TestSpark.*;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.spark.agg.VkGpuAggregateExec;
import io.vkspark.spark.api.GpuKernel;
import io.vkspark.spark.api.GpuUdf;
import io.vkspark.spark.api.GpuUdfs;
import io.vkspark.spark.exec.GpuEvalIterator;
import io.vkspark.spark.plan.VkExplain;
import io.vkspark.spark.conf.Settings;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * String and binary results of GPU UDFs through every path, each compared with Spark's rows with
 * vkspark off (the UDFs' own call()): on the GPU, with rows the kernel hands back (non-ASCII names,
 * counted per cause), without a device, under strict verify, coalesced and cached batches, a row
 * too wide to stage, as a grouping key and in a filter, under an aggregate that must fold on the
 * host, and a {@code vkspark_define} body returning a string.
 */
@ExtendWith(TestSpark.Validated.class)
final class StringResultsSparkTest {
  private static String table;

  /** {@code name.trim().toLowerCase()}: on the GPU for ASCII names, call() for the rest. */
  public static final class NormName implements UDF1<String, String>, GpuUdf {
    @Override
    public String call(String s) {
      return s == null ? null : s.trim().toLowerCase();
    }

    @Override
    public GpuKernel kernel() {
      return GpuKernel.returns("string").arg("name", "string")
          .body("vk_str_require_ascii(name); return vk_str_lower(vk_str_trim(name));");
    }
  }

  /** {@code email.substring(email.indexOf('@') + 1).toLowerCase()}. */
  public static final class EmailDomain implements UDF1<String, String>, GpuUdf {
    @Override
    public String call(String e) {
      return e == null ? null : e.substring(e.indexOf('@') + 1).toLowerCase();
    }

    @Override
    public GpuKernel kernel() {
      return GpuKernel.returns("string").arg("email", "string").body("""
          vk_str_require_ascii(email);
          return vk_str_lower(vk_str_sub(email, vk_str_find(email, 64u, 0) + 1, vk_str_len(email)));""");
    }
  }

  /** The bytes reversed, or null for an empty value: a binary result with nulls of its own. */
  public static final class Reversed implements UDF1<byte[], byte[]>, GpuUdf {
    @Override
    public byte[] call(byte[] b) {
      if (b == null || b.length == 0) {
        return null;
      }
      byte[] out = new byte[b.length];
      for (int i = 0; i < b.length; i++) {
        out[i] = b[b.length - 1 - i];
      }
      return out;
    }

    @Override
    public GpuKernel kernel() {
      return GpuKernel.returns("binary").arg("b", "binary").body("""
          if (b_length() == 0) { return vk_str_null(); }
          for (int i = b_length() - 1; i >= 0; i--) { vk_out_byte(b_byte(i)); }
          return vk_str_empty();""");
    }
  }

  private static final String[] FIRST = {"Ada", "  Grace ", "ALAN", "linus\t", "Émile", "Zoë", "名前", "Ørjan", "", "   ",
      "Bob 🎉", "x"};
  private static final String[] DOMAIN = {"Example.COM", "mail.org", "Ünïcode.de", "a.b", "", "X@Y.io"};

  @BeforeAll
  static void data() throws Exception {
    GpuUdfs.register(spark(), "norm_name", new NormName());
    GpuUdfs.register(spark(), "email_domain", new EmailDomain());
    GpuUdfs.register(spark(), "bytes_rev", new Reversed());
    table = Files.createTempDirectory("vkspark-strings").resolve("t.parquet").toString();
    Random r = new Random(32);
    List<Row> rows = new ArrayList<>();
    for (int id = 0; id < 3000; id++) {
      String name = r.nextInt(15) == 0 ? null : FIRST[r.nextInt(FIRST.length)] + (r.nextBoolean() ? " " + id : "");
      String email = r.nextInt(15) == 0 ? null : r.nextInt(20) == 0 ? "no-at-sign" + id
          : "User." + id + "@" + DOMAIN[r.nextInt(DOMAIN.length)];
      byte[] raw = name == null ? null : name.getBytes(StandardCharsets.UTF_8);
      if (id == 7) {
        name = "  " + "Long-Name ".repeat(400) + id; // 4 KB: past a small spark.vkspark.batchBytes
      }
      rows.add(RowFactory.create((long) id, name, email, raw));
    }
    StructType schema = new StructType().add("id", DataTypes.LongType).add("name", DataTypes.StringType)
        .add("email", DataTypes.StringType).add("raw", DataTypes.BinaryType);
    spark().createDataFrame(rows, schema).repartition(3).write().parquet(table);
  }

  private static Supplier<Dataset<Row>> query() {
    return () -> spark().read().parquet(table)
        .selectExpr("id", "norm_name(name) AS n", "email_domain(email) AS d", "hex(bytes_rev(raw)) AS r");
  }

  @Test
  void onGpu_equalSparksRows_nonAsciiRowsHandedBackAndCounted() {
    spark().conf().set(Settings.METRICS_LEVEL.key(), "debug");
    try {
      List<List<Row>> both = onAndOff(query(), TestSpark::assertOnGpuExceptHandedBackRows);
      assertRowsEqual(both.get(1), both.get(0));
      Dataset<Row> df = query().get();
      df.collectAsList();
      Map<String, Long> m = metrics(gpuNodes(df).get(0));
      assertEquals(3000L, m.get("gpuRows"), m::toString);
      assertTrue(m.get("handedBackRows") > 300, m::toString);
      assertEquals(m.get("handedBackRows"), m.get("handedBackNonAscii"), m::toString);
      assertEquals(0L, m.get("handedBackMalformedUtf8") + m.get("handedBackOverflow"), m::toString);
    } finally {
      spark().conf().unset(Settings.METRICS_LEVEL.key());
    }
  }

  @Test
  void withoutDevice_callInTheNode_sameRows() {
    List<Row> cpu = onAndOff(query(), TestSpark::assertOnGpuExceptHandedBackRows).get(1);
    withFallback(() -> withoutDevice(() -> assertVksparkEqualsCpu(query(), df -> {
      Map<String, Long> m = metrics(gpuNodes(df).get(0));
      assertEquals(0L, m.get("gpuRows"), m::toString);
      assertTrue(m.get("cpuRows") >= 3000L, m::toString);
    })));
    assertEquals(3000, cpu.size());
  }

  @Test
  void strictVerify_comparesStrings_findsNoMismatch() {
    spark().conf().set(Settings.VERIFY.key(), "strict");
    spark().conf().set(Settings.VERIFY_SAMPLE_RATE.key(), "1");
    try {
      Dataset<Row> df = query().get();
      df.collectAsList();
      assertOnGpuExceptHandedBackRows(df);
      Map<String, Long> m = metrics(gpuNodes(df).get(0));
      assertTrue(m.get("verifyRows") > 3 * 2500, m::toString);
      assertEquals(0L, m.get("verifyMismatches"), m::toString);
    } finally {
      spark().conf().unset(Settings.VERIFY.key());
      spark().conf().unset(Settings.VERIFY_SAMPLE_RATE.key());
    }
  }

  @Test
  void groupingKeyAndFilter_onStringResults() {
    spark().read().parquet(table).createOrReplaceTempView("strings_t");
    assertVksparkEqualsCpu(() -> spark().sql("SELECT email_domain(email) AS d, count(*) AS c, max(norm_name(name)) AS m"
        + " FROM strings_t WHERE norm_name(name) <> 'ada' GROUP BY d"), TestSpark::assertOnGpuExceptHandedBackRows);
    assertVksparkEqualsCpu(() -> spark().sql("SELECT id, name FROM strings_t WHERE email_domain(email) = 'mail.org'"),
        TestSpark::assertOnGpuExceptHandedBackRows);
  }

  @Test
  void coalescedAndCachedBatches_sameRows() {
    spark().conf().set("spark.sql.parquet.columnarReaderBatchSize", "300");
    try {
      List<List<Row>> both = onAndOff(query(), TestSpark::assertOnGpuExceptHandedBackRows);
      assertRowsEqual(both.get(1), both.get(0));
    } finally {
      spark().conf().unset("spark.sql.parquet.columnarReaderBatchSize");
    }
    Dataset<Row> cached = spark().read().parquet(table).cache();
    try {
      assertEquals(3000, cached.count());
      assertVksparkEqualsCpu(() -> cached.selectExpr("id", "norm_name(name)", "email_domain(email)"),
        TestSpark::assertOnGpuExceptHandedBackRows);
      // the results themselves cached, and read again
      List<Row> expected = onAndOff(query(), df -> { }).get(1);
      Dataset<Row> results = query().get().cache();
      try {
        List<Row> again = results.collectAsList();
        assertRowsEqual(expected, again.stream().sorted(Comparator.comparing(
            (Row x) -> String.valueOf(x.get(0)))).toList());
      } finally {
        results.unpersist(true);
      }
    } finally {
      cached.unpersist(true);
    }
  }

  @Test
  void rowTooWideToStage_runsWithCall() {
    spark().conf().set(Settings.BATCH_BYTES.key(), "2k");
    try {
      withFallback(() -> assertVksparkEqualsCpu(query(), df -> {
        Map<String, Long> m = metrics(gpuNodes(df).get(0));
        assertTrue(m.get("cpuRows") > 0 && m.get("gpuRows") > 0, m::toString);
      }));
    } finally {
      spark().conf().unset(Settings.BATCH_BYTES.key());
    }
  }

  @Test
  void aggregateOverStringResults_foldsOnTheHost() {
    spark().conf().set(Settings.FUSE_AGGREGATES.key(), "true");
    try {
      Supplier<Dataset<Row>> q = () -> spark().read().parquet(table).selectExpr("norm_name(name) AS n", "email_domain(email) AS d")
          .selectExpr("count(n)", "max(length(d))", "count(*)");
      List<List<Row>> both = onAndOff(q, df -> {
        VkExplain.visit(df.queryExecution().executedPlan(), p -> {
          if (p instanceof VkGpuAggregateExec g) {
            assertEquals(0L, GpuEvalIterator.snapshot(g.metricsMap()).get("gpuReducedRows"), "strings are not reduced on the GPU");
          }
        });
      });
      assertRowsEqual(both.get(1), both.get(0));
    } finally {
      spark().conf().unset(Settings.FUSE_AGGREGATES.key());
    }
  }

  @Test
  void vksparkDefineAndGlslFile_returnStrings() {
    spark().sql("SELECT vkspark_define('string glsl_initials(string s) {"
        + " vk_string t = vk_str_trim(s); if (vk_str_len(t) == 0) { return vk_str_null(); }"
        + " vk_out_byte(vk_ascii_upper(vk_str_at(t, 0))); vk_out_byte(46u); vk_out_int(vk_str_len(t));"
        + " return vk_str_empty(); }')").collectAsList();
    Dataset<Row> df = spark().sql("SELECT id, name, glsl_initials(name), glsl_file_trim(name) FROM parquet.`" + table + "`");
    List<Row> rows = df.collectAsList();
    assertOnGpuExceptHandedBackRows(df);
    int checked = 0;
    for (Row r : rows) {
      String name = r.getString(1);
      byte[] t = name == null ? null : name.trim().getBytes(StandardCharsets.UTF_8);
      int b = t == null || t.length == 0 ? -1 : t[0] & 0xff;
      // a multi-byte character's lead byte alone is not UTF-8: handed back, and a GLSL-only UDF has no call(): null
      String want = b < 0 || b >= 128 ? null : Character.toUpperCase((char) b) + "." + t.length;
      assertEquals(want, r.isNullAt(2) ? null : r.getString(2), r::toString);
      // spark.vkspark.glsl's glsl_file_trim: Java's trim, ASCII letters upper-cased, other characters kept
      String upper = name == null ? null : name.trim().chars().mapToObj(c -> String.valueOf((char) (c >= 'a' && c <= 'z'
          ? c - 32 : c))).collect(Collectors.joining());
      assertEquals(upper, r.isNullAt(3) ? null : r.getString(3), r::toString);
      checked++;
    }
    assertTrue(checked > 2000, "rows checked: " + checked);
  }
}
