package io.vkspark.spark;

import io.vkspark.spark.api.GpuKernel;
import io.vkspark.spark.api.GpuUdf;
import io.vkspark.spark.api.GpuUdfs;
import io.vkspark.spark.shim.Scala;
import io.vkspark.spark.api.Tolerance;
import io.vkspark.spark.conf.Settings;

import static io.vkspark.spark.TestSpark.*;
import static org.junit.jupiter.api.Assertions.*;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.api.java.UDF2;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.ScalaUDF;
import org.apache.spark.sql.types.ArrayType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import scala.collection.Seq;

/**
 * String, binary and array arguments in Spark SQL: a string hash, a string-to-int parser, a
 * binary checksum and cosine similarity of an array&lt;float&gt; column with a constant vector,
 * over a Parquet table with nulls, empty values, unicode and nulls inside arrays. Every row runs
 * on the GPU and equals the UDF's call() (Spark's CPU plan).
 */
@ExtendWith(TestSpark.Validated.class)
final class VarTypesSparkTest {
  private static String table;

  /** FNV-1a of a string's UTF-8 bytes. */
  public static final class Fnv1a implements UDF1<String, Integer>, GpuUdf {
    @Override
    public Integer call(String s) {
      if (s == null) {
        return null;
      }
      int h = 0x811c9dc5;
      for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
        h = (h ^ (b & 0xff)) * 16777619;
      }
      return h;
    }

    @Override
    public GpuKernel kernel() {
      return GpuKernel.returns("int").arg("s", "string").body("""
          uint h = 2166136261u;
          for (int i = 0; i < s_length(); i++) {
            h = (h ^ s_byte(i)) * 16777619u;
          }
          return int(h);""");
    }
  }

  /** The leading optional '-' and digits of a string as an int (wrapping), 0 when there are none. */
  public static final class ParseInt implements UDF1<String, Integer>, GpuUdf {
    @Override
    public Integer call(String s) {
      if (s == null) {
        return null;
      }
      byte[] b = s.getBytes(StandardCharsets.UTF_8);
      boolean neg = b.length > 0 && b[0] == '-';
      int v = 0;
      for (int i = neg ? 1 : 0; i < b.length && b[i] >= '0' && b[i] <= '9'; i++) {
        v = v * 10 + (b[i] - '0');
      }
      return neg ? -v : v;
    }

    @Override
    public GpuKernel kernel() {
      return GpuKernel.returns("int").arg("s", "string").body("""
          bool neg = s_length() > 0 && s_byte(0) == 45u;
          int v = 0;
          for (int i = neg ? 1 : 0; i < s_length(); i++) {
            uint c = s_byte(i);
            if (c < 48u || c > 57u) { break; }
            v = v * 10 + int(c - 48u);
          }
          return neg ? -v : v;""");
    }
  }

  /** Length times 1000 plus the sum of the bytes of a binary. */
  public static final class BinarySum implements UDF1<byte[], Long>, GpuUdf {
    @Override
    public Long call(byte[] b) {
      if (b == null) {
        return null;
      }
      long s = b.length * 1000L;
      for (byte x : b) {
        s += x & 0xff;
      }
      return s;
    }

    @Override
    public GpuKernel kernel() {
      return GpuKernel.returns("bigint").arg("b", "binary").body("""
          int64_t s = int64_t(b_length()) * 1000l;
          for (int i = 0; i < b_length(); i++) { s += int64_t(b_byte(i)); }
          return s;""");
    }
  }

  /** Cosine similarity over the elements both arrays hold (nulls skipped); 0 when either has no norm. */
  public static final class Cosine implements UDF2<Seq<Float>, Seq<Float>, Float>, GpuUdf {
    @Override
    public Float call(Seq<Float> x, Seq<Float> y) {
      if (x == null || y == null) {
        return null;
      }
      List<Float> a = Scala.list(x);
      List<Float> b = Scala.list(y);
      float dot = 0;
      float na = 0;
      float nb = 0;
      for (int i = 0; i < Math.min(a.size(), b.size()); i++) {
        if (a.get(i) != null && b.get(i) != null) {
          dot += a.get(i) * b.get(i);
          na += a.get(i) * a.get(i);
          nb += b.get(i) * b.get(i);
        }
      }
      return na == 0 || nb == 0 ? 0f : (float) (dot / Math.sqrt(na * nb));
    }

    @Override
    public GpuKernel kernel() {
      return GpuKernel.returns("float").arg("a", "array<float>").arg("b", "array<float>").body("""
          float dot = 0.0;
          float na = 0.0;
          float nb = 0.0;
          for (int i = 0; i < min(a_length(), b_length()); i++) {
            if (a_isNull(i) || b_isNull(i)) { continue; }
            dot += a_at(i) * b_at(i);
            na += a_at(i) * a_at(i);
            nb += b_at(i) * b_at(i);
          }
          return na == 0.0 || nb == 0.0 ? 0.0 : dot / sqrt(na * nb);""");
    }

    @Override
    public Tolerance tolerance() {
      return new Tolerance(64, 1e-5, 1e-6);
    }
  }

  /** The sum of an array<int>'s elements as a bigint, nulls skipped. */
  public static final class ArraySum implements UDF1<Seq<Integer>, Long>, GpuUdf {
    @Override
    public Long call(Seq<Integer> v) {
      if (v == null) {
        return null;
      }
      long s = 0;
      for (Integer x : Scala.list(v)) {
        s += x == null ? 0 : x;
      }
      return s;
    }

    @Override
    public GpuKernel kernel() {
      return GpuKernel.returns("bigint").arg("v", "array<int>").body("""
          int64_t s = 0l;
          for (int i = 0; i < v_length(); i++) { s += int64_t(v_at(i)); }
          return s;""");
    }
  }

  @BeforeAll
  static void data() throws Exception {
    GpuUdfs.register(spark(), "fnv1a", new Fnv1a());
    GpuUdfs.register(spark(), "parse_int", new ParseInt());
    GpuUdfs.register(spark(), "binary_sum", new BinarySum());
    GpuUdfs.register(spark(), "cosine", new Cosine());
    GpuUdfs.register(spark(), "asum", new ArraySum());
    table = Files.createTempDirectory("vkspark-vartypes").resolve("t.parquet").toString();
    spark().range(0, 6000, 1, 4).selectExpr("id",
        "CASE WHEN id % 10 = 3 THEN NULL WHEN id % 10 = 4 THEN '' WHEN id % 3 = 0 THEN cast(id * 7919 - 20000000 as string)"
            + " ELSE concat('Grüße ', id, ' 名前 🎉', repeat('x', cast(id % 50 as int))) END AS s",
        "CASE WHEN id % 11 = 5 THEN NULL ELSE encode(concat('b', id), 'UTF-8') END AS bin",
        "CASE WHEN id % 13 = 1 THEN NULL WHEN id % 17 = 2 THEN cast(array() AS array<float>)"
            + " ELSE transform(sequence(1, 8), k -> CASE WHEN (id * 7 + k) % 23 = 0 THEN NULL"
            + " ELSE cast(sin(id * k) AS float) END) END AS emb",
        "CASE WHEN id % 19 = 7 THEN NULL ELSE transform(sequence(0, cast(id % 9 AS int)), k -> CASE WHEN (id + k) % 5 = 0"
            + " THEN NULL ELSE cast(id * k - 300 AS int) END) END AS ints")
        .write().parquet(table);
  }


  private static Dataset<Row> select(String... cols) {
    return spark().read().parquet(table).selectExpr(cols);
  }

  @Test
  void stringAndBinaryUdfs_everyRowOnGpu_equalCall() {
    String[] cols = {"id", "fnv1a(s) AS h", "parse_int(s) AS p", "binary_sum(bin) AS b"};
    Dataset<Row> gpu = select(cols);
    assertEquals(1, gpuNodes(gpu).size(), () -> explain(gpu));
    assertGpuEqualsCpu(() -> select(cols));
    List<Row> rows = gpu.collectAsList();
    assertAllRowsOnGpu(gpu);
    assertEquals(3 * 6000L, metrics(gpuNodes(gpu).get(0)).get("gpuRows") * 3, "every row of the three calls on the GPU");
    assertTrue(rows.stream().anyMatch(r -> r.isNullAt(1)), "null strings give null");
    assertTrue(rows.stream().anyMatch(r -> !r.isNullAt(2) && r.getInt(2) < 0), "negative numbers were parsed");
  }

  @Test
  void cosineWithAConstantVector_coalesced_everyRowOnGpu_equalsCall() {
    String[] cols = {"id",
        "cosine(emb, cast(array(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8) AS array<float>)) AS c"};
    // the constant is computed below the node, row by row: RowToColumnar's 300-row batches are coalesced
    // (arrays staged by BatchCoalescer); strict verify: every row against call() inside the GPU run too
    String[] conf = {"spark.sql.inMemoryColumnarStorage.batchSize", "300", Settings.METRICS_LEVEL.key(), "debug",
        Settings.VERIFY.key(), "strict", Settings.VERIFY_SAMPLE_RATE.key(), "1"};
    for (int k = 0; k < conf.length; k += 2) {
      spark().conf().set(conf[k], conf[k + 1]);
    }
    Dataset<Row> gpu;
    List<Row> rows;
    try {
      gpu = select(cols);
      assertEquals(1, gpuNodes(gpu).size(), () -> explain(gpu));
      assertGpuEqualsCpu(() -> select(cols));
      rows = gpu.collectAsList();
      assertAllRowsOnGpu(gpu);
      Map<String, Long> m = metrics(gpuNodes(gpu).get(0));
      assertEquals(6000L, m.get("gpuRows"), m.toString());
      assertTrue(m.get("gpuDispatches") < m.get("inputBatches"), "300-row batches coalesced: " + m);
      assertTrue(m.get("inputBatches") >= 20, "6,000 rows in batches of 300: " + m);
    } finally {
      for (int k = 0; k < conf.length; k += 2) {
        spark().conf().unset(conf[k]);
      }
    }
    assertTrue(rows.stream().anyMatch(r -> r.isNullAt(1)), "null arrays give null");
    assertTrue(rows.stream().anyMatch(r -> !r.isNullAt(1) && r.getFloat(1) == 0f), "empty arrays give 0");
    assertTrue(rows.stream().anyMatch(r -> !r.isNullAt(1) && Math.abs(r.getFloat(1)) > 0.5f));
  }

  @Test
  void arraysWhoseElementsCannotBeNull_everyRowOnGpu_equalCall() {
    String[] cols = {"id", "asum(array(1, 2, coalesce(cast(id AS int), 0))) AS a", "asum(sequence(1, cast(id % 20 AS int))) AS q"};
    Dataset<Row> gpu = select(cols);
    for (int c = 1; c < 3; c++) { // what the test is about: Spark types these arguments array<int> with containsNull=false
      ArrayType t = argType(gpu, c);
      assertFalse(t.containsNull(), t::toString);
    }
    String plan = explain(gpu);
    assertFalse(plan.contains("runs on CPU"), plan);
    assertEquals(1, gpuNodes(gpu).size(), plan);
    assertGpuEqualsCpu(() -> select(cols));
    List<Row> rows = gpu.collectAsList();
    assertAllRowsOnGpu(gpu);
    assertEquals(6000L, metrics(gpuNodes(gpu).get(0)).get("gpuRows"));
    assertTrue(rows.stream().anyMatch(r -> r.getLong(1) == 3 + r.getLong(0) && r.getLong(2) > 100), "sums of the literal and the sequence");
  }

  @Test
  void argumentsComputedWithLambdas_areStaged_everyRowOnGpu_equalCall() {
    String[] cols = {"id", "asum(transform(ints, x -> x * 2)) AS t", "asum(filter(ints, x -> x > 0)) AS f",
        "asum(array(aggregate(ints, 0, (acc, x) -> acc + coalesce(x, 0)))) AS g"};
    Dataset<Row> gpu = select(cols);
    String plan = explain(gpu);
    assertFalse(plan.contains("runs on CPU"), plan);
    assertEquals(1, gpuNodes(gpu).size(), plan);
    assertGpuEqualsCpu(() -> select(cols));
    List<Row> rows = gpu.collectAsList();
    assertAllRowsOnGpu(gpu);
    assertEquals(6000L, metrics(gpuNodes(gpu).get(0)).get("gpuRows"));
    assertTrue(rows.stream().anyMatch(r -> r.isNullAt(1)), "null arrays give null");
    assertTrue(rows.stream().anyMatch(r -> !r.isNullAt(1) && r.getLong(1) != 0 && r.getLong(2) != r.getLong(1) / 2),
        "filter dropped elements");
  }

  @Test
  void callReadingAnOuterLambdaVariable_staysInItsLambda() {
    // The inner lambda binds x, the outer one y: asum(...) reads y, so it can only run inside the outer lambda.
    String col = "transform(ints, y -> asum(transform(ints, x -> x + coalesce(y, 0)))) AS t";
    withFallback(() -> {
      Dataset<Row> df = select("id", col);
      assertTrue(explain(df).contains("asum runs on CPU because it is inside a lambda function"), explain(df));
      assertVksparkEqualsCpu(() -> select("id", col), ran -> assertTrue(gpuNodes(ran).isEmpty(), explain(ran)));
    });
  }

  /** The type Spark gives argument 1 of the GPU UDF call in column {@code c} of a query. */
  private static ArrayType argType(Dataset<Row> df, int c) {
    Expression e = df.queryExecution().analyzed().expressions().apply(c);
    ScalaUDF u = (ScalaUDF) e.find(x -> x instanceof ScalaUDF).get();
    return (ArrayType) u.children().apply(0).dataType();
  }
}
