package io.vkspark.examples;

import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * A long-running local Spark application, standing in for a Thrift or Connect server, for
 * {@link JobExitCodeTest}: it runs a GPU UDF query, prints what ran where, then waits to be stopped
 * the way Spark's stop scripts stop a server, with SIGTERM.
 */
public final class SigtermProbe {
  private SigtermProbe() {}

  public static void main(String[] args) throws InterruptedException {
    SparkSession spark = SparkJobs.session("vkspark-sigterm-probe").spark();
    SparkJobs.registerAll(spark);
    Dataset<Row> df = spark.range(0, 20_000, 1, 2).selectExpr("id", "CAST(id AS DOUBLE) AS a")
        .selectExpr("id", "in_the_money(a, 10000D) AS itm");
    List<Row> rows = df.collectAsList();
    long wrong = rows.stream().filter(r -> r.getBoolean(1) != new InTheMoney().call((double) r.getLong(0), 10000D)).count();
    Map<String, Long> m = SparkJobs.gpuMetrics(df);
    System.out.println("[probe] rows " + rows.size() + ", wrong " + wrong + ", on GPU " + m.get("gpuRows")
        + ", on CPU " + m.get("cpuRows"));
    System.out.println("[probe] " + SparkJobs.deviceLine(spark));
    System.out.println("[probe] ready");
    System.out.flush();
    Thread.currentThread().join(); // a server: runs until the process is stopped
  }
}
