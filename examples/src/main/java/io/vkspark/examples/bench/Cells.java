package io.vkspark.examples.bench;

import io.vkspark.examples.SparkJobs;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * What {@link MatrixBench} and {@link SweepBench} share: flags, session settings set around one
 * query (and unset after), timing one query with its plan prepared first, the GPU node's metrics
 * read by name (a metric a build does not have is simply absent), and comparing result rows
 * within a tolerance.
 */
final class Cells {
  private Cells() {}

  /** {@code --key value} pairs; a key outside {@code flags} or a key without a value is a usage error. */
  static Map<String, String> parse(String[] args, Set<String> flags, String usage) {
    Map<String, String> m = new LinkedHashMap<>();
    for (int i = 0; i < args.length; i++) {
      String key = args[i].startsWith("--") ? args[i].substring(2) : "";
      if (!flags.contains(key) || i + 1 >= args.length) {
        throw new IllegalArgumentException("usage: " + usage + "; got " + args[i]);
      }
      m.put(key, args[++i]);
    }
    return m;
  }

  static List<String> list(String s) {
    return Arrays.stream(s.split(",")).map(String::trim).filter(x -> !x.isEmpty()).toList();
  }

  static long longArg(Map<String, String> a, String key, long dflt) {
    return Long.parseLong(a.getOrDefault(key, String.valueOf(dflt)).replace("_", ""));
  }

  /**
   * Sets {@code conf} on the session. A key Spark refuses to change at runtime (a static setting)
   * is reported and skipped: its value is then the one the session was built with.
   */
  static void set(SparkSession spark, Map<String, String> conf) {
    conf.forEach((k, v) -> {
      try {
        spark.conf().set(k, v);
      } catch (RuntimeException e) {
        System.err.println("[bench] " + k + "=" + v + " cannot be set at runtime (" + e.getMessage()
            + "); the session keeps its start value " + spark.conf().getOption(k));
      }
    });
  }

  static void unset(SparkSession spark, Map<String, String> conf) {
    conf.keySet().forEach(k -> {
      try {
        spark.conf().unset(k);
      } catch (RuntimeException e) {
        // a static setting: it was not changed either
      }
    });
  }

  /** One run of a query: its wall time (planning excluded), its rows, and its GPU nodes' metrics (empty: none). */
  record Run(double seconds, List<Row> rows, Map<String, Long> gpu) {}

  /** Plans {@code query}'s Dataset, then times collecting it. */
  static Run time(Supplier<Dataset<Row>> query) {
    Dataset<Row> df = query.get();
    df.queryExecution().executedPlan(); // analysis, optimization and planning are not what is measured
    long t0 = System.nanoTime();
    List<Row> rows = df.collectAsList();
    double s = (System.nanoTime() - t0) / 1e9;
    return new Run(s, rows, SparkJobs.gpuMetrics(df));
  }

  static double median(double[] t) {
    double[] s = t.clone();
    Arrays.sort(s);
    return s.length == 0 ? Double.NaN : s[s.length / 2];
  }

  static List<Double> rounded(double[] t) {
    List<Double> out = new ArrayList<>();
    for (double x : t) {
      out.add(Math.round(x * 1e4) / 1e4);
    }
    return out;
  }

  /**
   * Whether two results agree: the same number of rows; floating-point values within
   * {@code tolerance} relative to the larger magnitude; integers exactly when {@code tolerance}
   * is 0, else within 2 or 1e-4 relative (a count of NaN results near the edge of a solver's
   * domain); anything else equal.
   */
  static boolean agree(List<Row> reference, List<Row> got, double tolerance) {
    if (reference.size() != got.size()) {
      return false;
    }
    for (int r = 0; r < reference.size(); r++) {
      Row a = reference.get(r);
      Row b = got.get(r);
      if (a.size() != b.size()) {
        return false;
      }
      for (int i = 0; i < a.size(); i++) {
        Object x = a.get(i);
        Object y = b.get(i);
        boolean integral = (x instanceof Long || x instanceof Integer) && (y instanceof Long || y instanceof Integer);
        if (integral) {
          long lx = ((Number) x).longValue();
          long ly = ((Number) y).longValue();
          long slack = tolerance == 0 ? 0 : Math.max(2, (long) (1e-4 * Math.max(Math.abs(lx), Math.abs(ly))));
          if (Math.abs(lx - ly) > slack) {
            return false;
          }
        } else if (x instanceof Number nx && y instanceof Number ny) {
          double dx = nx.doubleValue();
          double dy = ny.doubleValue();
          if (!(dx == dy || Math.abs(dx - dy) <= tolerance * Math.max(Math.abs(dx), Math.abs(dy)))) {
            return false;
          }
        } else if (x == null ? y != null : !x.equals(y)) {
          return false;
        }
      }
    }
    return true;
  }

  /** The largest relative difference between the numeric values of two results of the same shape (0: equal). */
  static double relDiff(List<Row> a, List<Row> b) {
    double worst = 0;
    for (int r = 0; r < Math.min(a.size(), b.size()); r++) {
      worst = Math.max(worst, SparkBench.relDiff(a.get(r), b.get(r)));
    }
    return worst;
  }

  /** A result as short text for the JSON: one row as itself, more as a count and the first. */
  static String text(List<Row> rows) {
    return rows.size() == 1 ? rows.get(0).toString() : rows.size() + " rows, first " + (rows.isEmpty() ? "-" : rows.get(0));
  }

  static String secs(double s) {
    return Double.isNaN(s) ? "" : String.format(Locale.ROOT, "%.3f s", s);
  }

  static String ratio(double x) {
    return Double.isNaN(x) || Double.isInfinite(x) ? "" : String.format(Locale.ROOT, "%.2fx", x);
  }
}
