package io.vkspark.examples.bench;

import io.vkspark.examples.SparkJobs;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.SparkContext;
import org.apache.spark.executor.TaskMetrics;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.scheduler.TaskInfo;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.metric.SQLMetric;

/**
 * Where the wall time of one query goes (issue 13, part 1): runs the query once and reads three
 * sources side by side: Spark's SQL metrics of every node of the executed plan (scan time,
 * aggregation build time, code-generated pipeline duration, shuffle write and fetch wait, and the
 * {@code VkGpuEval} node's upload, copy, wait and device times), and the task metrics of every
 * task the query ran, from a {@link SparkListener} (executor run and CPU time, deserialization,
 * garbage collection, result serialization, scheduler delay), per stage.
 *
 * <p>Spark sums node and task metrics over tasks, and {@code local[16]} runs 16 tasks at once, so
 * each time is given twice: summed over tasks, and divided by the number of task slots (an upper
 * bound of what it costs the query's wall time when all slots are busy). GPU device time is the
 * sum of every dispatch's device timestamps: submissions of concurrent tasks can overlap on the
 * GPU, so its share of wall time is an upper bound of how busy the GPU was.
 */
final class QueryProfile {
  private QueryProfile() {}

  /** One finished task's metrics (times in seconds, as Spark reports them: run, GC in ms; CPU in ns). */
  record TaskSample(int stageId, long launchMs, long finishMs, double run, double cpu, double deserialize, double gc,
                    double resultSerialization, double gettingResult, double schedulerDelay, long inputBytes,
                    long inputRecords, double shuffleWrite, double shuffleFetchWait, long shuffleReadBytes,
                    long peakExecutionMemory) {}

  /** Collects every finished task's metrics; {@link #take} hands over what the last query ran. */
  static final class TaskRecorder extends SparkListener {
    private final List<TaskSample> tasks = new ArrayList<>();

    @Override
    public synchronized void onTaskEnd(SparkListenerTaskEnd end) {
      TaskInfo info = end.taskInfo();
      TaskMetrics m = end.taskMetrics();
      if (info == null || m == null) {
        return; // a failed or killed task may carry no metrics
      }
      double run = m.executorRunTime() / 1e3;
      double deserialize = m.executorDeserializeTime() / 1e3;
      double resultSerialization = m.resultSerializationTime() / 1e3;
      double gettingResult = info.gettingResultTime() > 0 ? (info.finishTime() - info.gettingResultTime()) / 1e3 : 0;
      // As the Spark UI computes it: what the task's duration leaves after running, (de)serializing and fetching.
      double schedulerDelay = Math.max(0, (info.finishTime() - info.launchTime()) / 1e3 - run - deserialize
          - resultSerialization - gettingResult);
      tasks.add(new TaskSample(end.stageId(), info.launchTime(), info.finishTime(), run, m.executorCpuTime() / 1e9,
          deserialize, m.jvmGCTime() / 1e3, resultSerialization, gettingResult, schedulerDelay,
          m.inputMetrics().bytesRead(), m.inputMetrics().recordsRead(), m.shuffleWriteMetrics().writeTime() / 1e9,
          m.shuffleReadMetrics().fetchWaitTime() / 1e3, m.shuffleReadMetrics().totalBytesRead(), m.peakExecutionMemory()));
    }

    /** The tasks recorded since the last call, once Spark's listener bus has delivered every event. */
    List<TaskSample> take(SparkContext sc) {
      drainListenerBus(sc);
      synchronized (this) {
        List<TaskSample> out = List.copyOf(tasks);
        tasks.clear();
        return out;
      }
    }
  }

  /** Registers a recorder of task metrics on the session's context. */
  static TaskRecorder attach(SparkSession spark) {
    TaskRecorder r = new TaskRecorder();
    spark.sparkContext().addSparkListener(r);
    return r;
  }

  /**
   * Waits until Spark's listener bus has delivered every posted event. {@code listenerBus} is
   * {@code private[spark]} (public in bytecode, the same in Spark 3.5 to 4.2); kept in this one
   * method so it can move into a version shim.
   */
  static void drainListenerBus(SparkContext sc) {
    if (!SparkJobs.drainListenerBus(sc)) {
      System.err.println("[bench] listener bus did not drain");
    }
  }

  /** A breakdown: the JSON map and the table for people. */
  record Breakdown(Map<String, Object> json, String table) {}

  /**
   * Runs {@code df} once (its plan prepared first, so planning is not timed) and breaks its wall
   * time down. {@code labels} go first in the JSON (case, source, variant, rows...).
   */
  static Breakdown profile(SparkSession spark, TaskRecorder recorder, Dataset<Row> df, Map<String, Object> labels,
                           int slots) {
    df.queryExecution().executedPlan();
    recorder.take(spark.sparkContext()); // whatever ran before
    long startMs = System.currentTimeMillis();
    long t0 = System.nanoTime();
    Row result = df.collectAsList().get(0);
    double wall = (System.nanoTime() - t0) / 1e9;
    long endMs = System.currentTimeMillis();
    List<TaskSample> tasks = recorder.take(spark.sparkContext());

    Map<String, Object> json = new LinkedHashMap<>();
    json.put("bench", "breakdown");
    json.putAll(labels);
    json.put("wall_s", wall);
    json.put("task_slots", slots);
    json.put("result", result.toString());
    List<Item> items = new ArrayList<>();

    // Task metrics, per stage and summed.
    Map<Integer, List<TaskSample>> byStage = new TreeMap<>();
    tasks.forEach(t -> byStage.computeIfAbsent(t.stageId(), k -> new ArrayList<>()).add(t));
    List<Object> stages = new ArrayList<>();
    byStage.forEach((id, ts) -> {
      Map<String, Object> s = new LinkedHashMap<>();
      s.put("stage", id);
      s.put("tasks", ts.size());
      s.put("span_s", (ts.stream().mapToLong(TaskSample::finishMs).max().orElse(0)
          - ts.stream().mapToLong(TaskSample::launchMs).min().orElse(0)) / 1e3);
      taskSums(ts).forEach((k, v) -> s.put(k, v instanceof Double d ? timing(d, slots, wall) : v));
      stages.add(s);
    });
    Map<String, Object> tasksJson = new LinkedHashMap<>();
    tasksJson.put("count", tasks.size());
    tasksJson.put("stages", byStage.size());
    long firstLaunch = tasks.stream().mapToLong(TaskSample::launchMs).min().orElse(startMs);
    long lastFinish = tasks.stream().mapToLong(TaskSample::finishMs).max().orElse(endMs);
    // Driver side: planning of stages and job submission before the first task; result handling after the last.
    tasksJson.put("before_first_task_s", Math.max(0, firstLaunch - startMs) / 1e3);
    tasksJson.put("after_last_task_s", Math.max(0, endMs - lastFinish) / 1e3);
    Map<String, Object> total = taskSums(tasks);
    total.forEach((k, v) -> {
      if (v instanceof Double d) {
        tasksJson.put(k, timing(d, slots, wall));
        items.add(new Item("tasks", "all stages", k.replaceFirst("_s$", "").replace('_', ' '), d, slots, wall));
      } else {
        tasksJson.put(k, v);
      }
    });
    tasksJson.put("per_stage", stages);
    // Wall-clock spans, not sums over tasks: their sum column stays empty and "per slot" is the span itself.
    items.add(new Item("driver", "", "before the first task (wall clock)", Double.NaN, slots, wall,
        Math.max(0, firstLaunch - startMs) / 1e3));
    items.add(new Item("driver", "", "after the last task (wall clock)", Double.NaN, slots, wall,
        Math.max(0, endMs - lastFinish) / 1e3));

    // SQL metrics of every node of the executed plan; the GPU node's apart.
    List<Object> nodes = new ArrayList<>();
    Map<String, Object> vk = new LinkedHashMap<>();
    SparkJobs.visit(df.queryExecution().executedPlan(), p -> {
      Map<String, SQLMetric> ms = SparkJobs.metricsByKey(p);
      if (ms.isEmpty()) {
        return;
      }
      boolean gpu = SparkJobs.GPU_NODE.equals(p.nodeName());
      Map<String, Object> values = new LinkedHashMap<>();
      ms.forEach((key, m) -> {
        String label = m.name().isDefined() ? m.name().get() : key;
        double seconds = switch (m.metricType()) {
          case "timing" -> m.value() / 1e3;
          case "nsTiming" -> m.value() / 1e9;
          default -> Double.NaN;
        };
        if (Double.isNaN(seconds)) {
          values.put(key, m.value());
        } else {
          values.put(key, timing(seconds, slots, wall));
          if (seconds > 0 || gpu) {
            items.add(new Item(gpu ? "vkspark" : "spark plan", nodeLabel(p), label, seconds, slots, wall));
          }
        }
      });
      if (gpu) {
        values.forEach((k, v) -> vk.merge(k, v, QueryProfile::add));
      }
      Map<String, Object> n = new LinkedHashMap<>();
      n.put("node", nodeLabel(p));
      n.put("metrics", values);
      nodes.add(n);
    });
    Object device = vk.get("deviceTime");
    if (device instanceof Map<?, ?> d) {
      double deviceS = (Double) d.get("sum_s");
      vk.put("device_share_of_wall", deviceS / wall);
    }
    json.put("vkspark", vk);
    json.put("tasks", tasksJson);
    json.put("plan", nodes);
    return new Breakdown(json, table(labels, wall, slots, tasks.size(), byStage.size(), items, vk));
  }

  /** One time in the table: where it was measured, the node, what it is, its sum over tasks. */
  private record Item(String source, String node, String what, double sum, int slots, double wall, double perSlot) {
    Item(String source, String node, String what, double sum, int slots, double wall) {
      this(source, node, what, sum, slots, wall, sum / slots);
    }
  }

  private static String nodeLabel(SparkPlan p) {
    return p.nodeName();
  }

  private static Map<String, Object> taskSums(List<TaskSample> ts) {
    Map<String, Object> s = new LinkedHashMap<>();
    s.put("executor_run_s", ts.stream().mapToDouble(TaskSample::run).sum());
    s.put("executor_cpu_s", ts.stream().mapToDouble(TaskSample::cpu).sum());
    s.put("jvm_gc_s", ts.stream().mapToDouble(TaskSample::gc).sum());
    s.put("deserialize_s", ts.stream().mapToDouble(TaskSample::deserialize).sum());
    s.put("result_serialization_s", ts.stream().mapToDouble(TaskSample::resultSerialization).sum());
    s.put("getting_result_s", ts.stream().mapToDouble(TaskSample::gettingResult).sum());
    s.put("scheduler_delay_s", ts.stream().mapToDouble(TaskSample::schedulerDelay).sum());
    s.put("shuffle_write_s", ts.stream().mapToDouble(TaskSample::shuffleWrite).sum());
    s.put("shuffle_fetch_wait_s", ts.stream().mapToDouble(TaskSample::shuffleFetchWait).sum());
    s.put("input_bytes", ts.stream().mapToLong(TaskSample::inputBytes).sum());
    s.put("input_records", ts.stream().mapToLong(TaskSample::inputRecords).sum());
    s.put("shuffle_read_bytes", ts.stream().mapToLong(TaskSample::shuffleReadBytes).sum());
    s.put("peak_execution_memory_max", ts.stream().mapToLong(TaskSample::peakExecutionMemory).max().orElse(0));
    return s;
  }

  /** A time as JSON: summed over tasks, per task slot, and per slot as a share of wall time. */
  private static Map<String, Object> timing(double sum, int slots, double wall) {
    Map<String, Object> t = new LinkedHashMap<>();
    t.put("sum_s", sum);
    t.put("per_slot_s", sum / slots);
    t.put("per_slot_share_of_wall", sum / slots / wall);
    return t;
  }

  @SuppressWarnings("unchecked")
  private static Object add(Object a, Object b) {
    if (a instanceof Long x && b instanceof Long y) {
      return x + y;
    }
    if (a instanceof Map<?, ?> x && b instanceof Map<?, ?> y) {
      Map<String, Object> sum = new LinkedHashMap<>((Map<String, Object>) x);
      ((Map<String, Object>) y).forEach((k, v) -> sum.merge(k, v, (p, q) -> ((Double) p) + ((Double) q)));
      return sum;
    }
    return b;
  }

  private static String table(Map<String, Object> labels, double wall, int slots, int tasks, int stages,
                              List<Item> items, Map<String, Object> vk) {
    StringBuilder b = new StringBuilder();
    b.append(String.format(Locale.ROOT, "[breakdown] %s: wall %.3f s, %d task slots, %d tasks in %d stages%n",
        labels.values(), wall, slots, tasks, stages));
    b.append(String.format(Locale.ROOT, "  %-10s %-28s %-52s %12s %11s %8s%n", "source", "node", "what", "sum (tasks)",
        "per slot", "of wall"));
    for (Item i : items) {
      b.append(String.format(Locale.ROOT, "  %-10s %-28s %-52s %12s %9.3f s %7.1f%%%n", i.source(),
          i.node().length() > 28 ? i.node().substring(0, 28) : i.node(), i.what().length() > 52 ? i.what().substring(0, 52)
              : i.what(), Double.isNaN(i.sum()) ? "" : String.format(Locale.ROOT, "%.3f s", i.sum()), i.perSlot(),
          100 * i.perSlot() / wall));
    }
    b.append("  (Spark's plan times nest: a WholeStageCodegen duration holds what it pipelines, and the partial\n"
        + "   HashAggregate's build time holds pulling its input through ColumnarToRow, VkGpuEval and the scan.)\n");
    if (vk.get("device_share_of_wall") instanceof Double share) {
      b.append(String.format(Locale.ROOT, "  GPU busy (device time / wall, an upper bound when submissions overlap): %.1f%%;"
              + " %s uploaded, %s read back, %s dispatches over %s child batches%n", 100 * share,
          vk.getOrDefault("uploadBytes", 0L), vk.getOrDefault("readbackBytes", 0L), vk.getOrDefault("gpuDispatches", "?"),
          vk.getOrDefault("inputBatches", "?")));
    }
    return b.toString();
  }

  /** Prints the table to {@code err} and returns the JSON line. */
  static String emit(Breakdown b, PrintStream err) {
    err.print(b.table());
    return Json.write(b.json());
  }
}
