package io.vkspark.spark.plan;

import io.vkspark.spark.executor.ExecutorDevice;
import io.vkspark.spark.shim.ExplainGeneratorShim;
import io.vkspark.spark.exec.call.GpuUdfCall;
import io.vkspark.spark.shim.Scala;
import io.vkspark.spark.conf.VkConf;
import io.vkspark.spark.exec.VkGpuEvalExec;
import io.vkspark.spark.conf.Settings;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec;
import org.apache.spark.sql.execution.adaptive.QueryStageExec;
import scala.runtime.BoxedUnit;

/**
 * The "vkspark" section of EXPLAIN (Spark's {@code spark.sql.extendedExplainProviders}, which the
 * plugin sets): which GPU UDF calls run on which device, and why the others run on the CPU. Spark
 * 4.0+ only: Spark 3.5 has no such providers (see {@link ExplainGeneratorShim}, whose interface
 * this class implements, hence no @Override).
 */
public final class VkExplain extends ExplainGeneratorShim {
  public String title() {
    return "vkspark";
  }

  public String generateExtendedInfo(SparkPlan plan) {
    List<String> lines = new ArrayList<>();
    String device = ExecutorDevice.current().map(g -> "'" + g.device().info().name() + "'").orElse("the executors' devices");
    visit(plan, node -> {
      if (node instanceof VkGpuEvalExec g) {
        for (GpuUdfCall c : g.calls()) {
          lines.add("vkspark: " + c.describe() + (c.onGpu() ? " (" + device + ")" : ""));
          if (c.onGpu() && c.kernel().hasLoops()) {
            lines.add("vkspark: " + loopNote(c, g.vkConf()));
          }
        }
      }
      node.getTagValue(InsertGpuEval.FALLBACK).foreach(reason -> {
        for (String r : reason.split("; ")) {
          lines.add("vkspark: " + r);
        }
        return BoxedUnit.UNIT;
      });
    });
    return lines.isEmpty() ? "vkspark: no GPU UDF calls in this plan\n" : String.join("\n", lines) + "\n";
  }

  /** What happens to a looping UDF's batches on a device that cuts loops short (the plan cannot know the executors' devices). */
  private static String loopNote(GpuUdfCall c, VkConf conf) {
    String here = ExecutorDevice.current().map(g -> {
      int limit = g.device().loopLimit();
      return limit > 0 ? "; '" + g.device().info().name() + "' stops loops after " + limit + " iterations"
          : "; '" + g.device().info().name() + "' has no loop limit";
    }).orElse("");
    return c.name() + " loops: a batch whose loops a device's loop limit cuts short (lavapipe: 65,535 iterations) "
        + (conf.fallback() ? "is recomputed on the CPU with call()"
            : "fails the query (" + Settings.FALLBACK.key() + "=false)")
        + ", never returned" + here;
  }

  /**
   * Every node of a physical plan, inside adaptive plans, query stages and subqueries too (what
   * {@code SparkPlan.foreach} does not reach), e.g. to find the {@code VkGpuEval} nodes and read
   * their metrics after a query ran.
   */
  public static void visit(SparkPlan plan, Consumer<SparkPlan> f) {
    plan.foreach(node -> {
      f.accept(node);
      if (node instanceof AdaptiveSparkPlanExec a) {
        visit(a.executedPlan(), f);
      } else if (node instanceof QueryStageExec q) {
        visit(q.plan(), f);
      }
      for (SparkPlan sub : Scala.list(node.subqueries())) {
        visit(sub, f);
      }
      return BoxedUnit.UNIT;
    });
  }
}
