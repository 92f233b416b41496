package io.vkspark.examples.bench;

import static io.vkspark.examples.bench.SparkBench.CPU_ONLY;
import static io.vkspark.examples.bench.SparkBench.FUSE_AGGREGATES;
import static io.vkspark.examples.bench.SparkBench.TRANSLATE;
import static io.vkspark.examples.bench.SparkBench.emit;
import static io.vkspark.examples.bench.SparkBench.run;

import io.vkspark.examples.bench.SparkBench.Result;
import io.vkspark.examples.bench.SparkBench.Variant;
import io.vkspark.examples.plain.BlackScholesJava;
import io.vkspark.examples.plain.ImpliedVolatilityJava;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.SparkSession;

/**
 * {@link SparkBench}'s {@code --cases translate} (issue 23, {@code make bench-translate}): a plain
 * Java UDF translated from its bytecode against the hand-written GPU UDF, the same Java UDF on the
 * CPU and built-in SQL, on the cached rows; its JSON lines are SparkBench's.
 */
final class TranslateCases {
  private TranslateCases() {}

  /**
   * Issue 23's comparison on the cached rows (views {@code bench} and {@code bench_iv}): for
   * Black-Scholes and implied volatility ({@code --translate-cases bs,iv}), as the JSON variants
   * <ul>
   *   <li>{@code java_udf_translated}: the plain Java UDF ({@link BlackScholesJava},
   *       {@link ImpliedVolatilityJava}: no vkspark API, no GLSL) with {@code spark.vkspark.translate=true},
   *       translated from its bytecode into a GPU kernel;</li>
   *   <li>{@code gpu_udf}: the hand-written GPU UDF ({@code black_scholes}, {@code implied_volatility});</li>
   *   <li>{@code spark_sql}: built-in SQL ({@link BlackScholesSql}, {@link ImpliedVolatilitySql};
   *       {@code --iv-sql false} leaves out the slow implied-volatility form);</li>
   *   <li>{@code java_udf}: the same plain Java UDF with {@code spark.vkspark.translate=false}, so
   *       Spark runs {@code call()} on the CPU; the reference the others must agree with.</li>
   * </ul>
   * The two GPU variants run with the plugin's default aggregate fusion, or both with
   * {@code --translate-fuse true|false}. After each case's lines (one per variant, as the other
   * cases) comes a {@code "bench": "translate_summary"} line: the medians, the time ratios
   * translated / hand-written and translated / Java UDF on the CPU (below 1: the translated UDF is
   * faster), and each variant's {@code gpuRows} metric, so a reader sees which ran on the GPU
   * ({@code translated_on_gpu}).
   */
  static void translate(SparkSession spark, Map<String, String> a, PrintStream json, int runs, String common,
                        String ivCommon, List<String> translateCases) {
    String fuse = a.getOrDefault("translate-fuse", "unset");
    if (!List.of("unset", "true", "false").contains(fuse)) {
      throw new IllegalArgumentException("--translate-fuse is unset, true or false, not " + fuse);
    }
    Map<String, String> gpuConf = fuse.equals("unset") ? Map.of() : Map.of(FUSE_AGGREGATES, fuse);
    Map<String, String> translated = new LinkedHashMap<>(gpuConf);
    translated.put(TRANSLATE, "true");
    // verify=sample is a translated UDF's default, and a fused SUM then folds on the host; with
    // verify=off the GPU reduces it, as for the hand-written UDF (whose default verify is off)
    Map<String, String> translatedNoVerify = new LinkedHashMap<>(translated);
    translatedNoVerify.put(io.vkspark.spark.conf.Settings.PREFIX + "verify", "off");
    if (translateCases.contains("bs")) {
      List<Result> results = new ArrayList<>();
      emit(json, run(spark, "black_scholes_translated", List.of(
          new Variant("java_udf_translated", () -> spark.sql("SELECT sum(black_scholes_java(s, k, t, r, v)) FROM bench"),
              translated),
          new Variant("java_udf_translated_verify_off", () -> spark.sql(
              "SELECT sum(black_scholes_java(s, k, t, r, v)) FROM bench"), translatedNoVerify),
          new Variant("gpu_udf", () -> spark.sql("SELECT sum(black_scholes(s, k, t, r, v)) FROM bench"), gpuConf),
          new Variant("spark_sql", () -> BlackScholesSql.with(spark.table("bench")).selectExpr("sum(bs)")),
          new Variant("java_udf", () -> spark.sql("SELECT sum(black_scholes_java(s, k, t, r, v)) FROM bench"), CPU_ONLY)),
          runs, common, 1e-9, results));
      emit(json, List.of(translateSummary("black_scholes_translated", common, fuse, results)));
    }
    if (translateCases.contains("iv")) {
      String nanToZero = "sum(CASE WHEN isnan(%1$s) THEN 0D ELSE %1$s END), count_if(isnan(%1$s))";
      List<Variant> v = new ArrayList<>(List.of(
          new Variant("java_udf_translated", () -> spark.sql("SELECT " + String.format(nanToZero,
              "implied_volatility_java(price, s, k, t, r)") + " FROM bench_iv"), translated),
          new Variant("java_udf_translated_verify_off", () -> spark.sql("SELECT " + String.format(nanToZero,
              "implied_volatility_java(price, s, k, t, r)") + " FROM bench_iv"), translatedNoVerify),
          new Variant("gpu_udf", () -> spark.sql("SELECT " + String.format(nanToZero,
              "implied_volatility(price, s, k, t, r)") + " FROM bench_iv"), gpuConf)));
      if (Boolean.parseBoolean(a.getOrDefault("iv-sql", "true"))) {
        // As in the iv case: whole-stage code generation would exceed the 64 KB method limit and interpret.
        v.add(new Variant("spark_sql", () -> ImpliedVolatilitySql.with(spark.table("bench_iv"), "iv")
            .selectExpr(String.format(nanToZero, "iv").split(", (?=count_if)")),
            Map.of("spark.sql.codegen.wholeStage", a.getOrDefault("iv-sql-wholestage", "false"))));
      }
      v.add(new Variant("java_udf", () -> spark.sql("SELECT " + String.format(nanToZero,
          "implied_volatility_java(price, s, k, t, r)") + " FROM bench_iv"), CPU_ONLY));
      List<Result> results = new ArrayList<>();
      emit(json, run(spark, "implied_volatility_translated", v,
          Integer.parseInt(a.getOrDefault("iv-runs", String.valueOf(runs))), ivCommon, 1e-7, results));
      emit(json, List.of(translateSummary("implied_volatility_translated", ivCommon, fuse, results)));
    }
  }

  /** The summary line of one {@link #translate} case, from its variants' {@link Result}s. */
  private static String translateSummary(String name, String common, String fuse, List<Result> results) {
    Map<String, Result> by = new LinkedHashMap<>();
    results.forEach(r -> by.put(r.variant(), r));
    double translated = by.get("java_udf_translated").medianS();
    double hand = by.get("gpu_udf").medianS();
    double cpu = by.get("java_udf").medianS();
    double sql = by.containsKey("spark_sql") ? by.get("spark_sql").medianS() : Double.NaN;
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("translated_s", translated);
    m.put("hand_written_gpu_s", hand);
    m.put("java_cpu_s", cpu);
    m.put("spark_sql_s", by.containsKey("spark_sql") ? sql : "absent (--iv-sql false)");
    m.put("translated_over_hand_written", translated / hand);
    if (by.containsKey("java_udf_translated_verify_off")) {
      double off = by.get("java_udf_translated_verify_off").medianS();
      m.put("translated_verify_off_s", off);
      m.put("translated_verify_off_over_hand_written", off / hand);
      m.put("hand_written_speed_share_verify_off", hand / off);
    }
    m.put("hand_written_speed_share", hand / translated);
    m.put("translated_over_java_cpu", translated / cpu);
    m.put("java_cpu_speedup", cpu / translated);
    m.put("spark_sql_speedup", by.containsKey("spark_sql") ? sql / translated : null);
    Map<String, Object> gpuRows = new LinkedHashMap<>();
    Map<String, Object> recomputed = new LinkedHashMap<>();
    for (Result r : results) {
      gpuRows.put(r.variant(), r.gpuMetrics().getOrDefault("gpuRows", 0L));
      recomputed.put(r.variant(), r.gpuMetrics().getOrDefault("recomputedBatches", 0L));
    }
    long translatedGpuRows = (Long) gpuRows.get("java_udf_translated");
    m.put("gpu_rows", gpuRows);
    m.put("recomputed_batches", recomputed);
    m.put("translated_on_gpu", translatedGpuRows > 0);
    m.put("java_cpu_on_gpu", (Long) gpuRows.get("java_udf") > 0);
    m.put("fuse_aggregates", fuse);
    m.put("agree", results.stream().allMatch(Result::agrees));
    m.put("max_rel_diff", results.stream().mapToDouble(Result::relDiff).max().orElse(0));
    if (translatedGpuRows == 0) {
      System.err.println("[bench] " + name + ": the translated Java UDF did not run on the GPU (no translator, "
          + "or it refused the class: see the plan's explain output); java_udf_translated is a CPU figure");
    }
    // Its own "bench" (as DataPathBench's data_path_summary), so readers of the variant lines (BenchChart) skip it.
    return "{\"bench\": \"translate_summary\", \"case\": \"" + name + "\", \"variant\": \"summary\", " + common + ", "
        + Json.write(m).substring(1);
  }
}
