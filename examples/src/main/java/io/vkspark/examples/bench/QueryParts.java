package io.vkspark.examples.bench;

import io.vkspark.examples.SparkJobs;
import io.vkspark.gpu.DeviceCounters;
import io.vkspark.spark.executor.ExecutorDevice;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.spark.SparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * Where one query's time goes (issue 35's breakdown), from timestamps and metrics: Spark's planning
 * on the driver, the time to its first task (job submission, adaptive stage planning, task
 * scheduling and launch; split at the first job's start and its first stage's submission), the span
 * of its tasks and what comes after the last one (result collection), each task's run and
 * deserialization and Spark's scheduler delay, the GPU node's host, device, fence-wait and
 * permit-wait times, and what the device created for the query
 * (command buffers, descriptor sets, buffers: the per-task device setup, zero once every shape's
 * buffer sets are pooled) and submitted. A Spark listener collects the tasks' events; the device's
 * counters are read in this JVM (local mode: the driver's executor).
 *
 * <p>Times in seconds, counts as they are; per query, so a sweep's breakdown is the median of each
 * part over its queries ({@link #medians}).
 */
final class QueryParts extends SparkListener {
  /** One task's times (ms, Spark's granularity). */
  private record Task(int stage, long launch, long finish, long run, long deserialize, long resultSerialize,
      long gettingResult) {}

  private final List<Task> tasks = new ArrayList<>();
  private int jobs;
  /** When the query's first job started and its first stage was submitted (ms, 0: none yet). */
  private long firstJobStart;
  private long firstStageSubmitted;
  private volatile boolean on;

  /** A query's rows, its timed collect (as {@link Cells#time}) and its parts. */
  record Measured(Cells.Run run, Map<String, Double> parts) {}

  /** The listener {@link #of} installed on each context. */
  private static final Map<SparkContext, QueryParts> INSTALLED = new java.util.WeakHashMap<>();

  /** The listener on {@code spark}'s context, installed on first use. */
  static synchronized QueryParts of(SparkSession spark) {
    return INSTALLED.computeIfAbsent(spark.sparkContext(), sc -> install(spark));
  }

  /** A listener on {@code spark}'s context. */
  static QueryParts install(SparkSession spark) {
    QueryParts p = new QueryParts();
    spark.sparkContext().addSparkListener(p);
    return p;
  }

  @Override
  public synchronized void onJobStart(SparkListenerJobStart jobStart) {
    if (on) {
      jobs++;
      firstJobStart = firstJobStart == 0 ? jobStart.time() : firstJobStart;
    }
  }

  @Override
  public synchronized void onStageSubmitted(SparkListenerStageSubmitted submitted) {
    if (on && firstStageSubmitted == 0 && submitted.stageInfo().submissionTime().isDefined()) {
      firstStageSubmitted = (Long) submitted.stageInfo().submissionTime().get();
    }
  }

  @Override
  public synchronized void onTaskEnd(SparkListenerTaskEnd end) {
    if (!on || end.taskMetrics() == null) {
      return;
    }
    var i = end.taskInfo();
    var m = end.taskMetrics();
    tasks.add(new Task(end.stageId(), i.launchTime(), i.finishTime(), m.executorRunTime(), m.executorDeserializeTime(),
        m.resultSerializationTime(), i.gettingResult() ? Math.max(0, i.finishTime() - i.gettingResultTime()) : 0));
  }

  /** Plans and runs {@code query} as {@link Cells#time} does, recording its parts. */
  Measured measure(SparkSession spark, Supplier<Dataset<Row>> query) {
    long p0 = System.nanoTime();
    Dataset<Row> df = query.get();
    df.queryExecution().executedPlan();
    double planS = (System.nanoTime() - p0) / 1e9;
    SparkJobs.drainListenerBus(spark.sparkContext());
    synchronized (this) {
      tasks.clear();
      jobs = 0;
      firstJobStart = 0;
      firstStageSubmitted = 0;
      on = true;
    }
    DeviceCounters before = counters();
    long wall0 = System.currentTimeMillis();
    long t0 = System.nanoTime();
    List<Row> rows = df.collectAsList();
    double collectS = (System.nanoTime() - t0) / 1e9;
    long wall1 = System.currentTimeMillis();
    DeviceCounters after = counters();
    SparkJobs.drainListenerBus(spark.sparkContext());
    List<Task> ts;
    int jobCount;
    long jobStart;
    long stageSubmitted;
    synchronized (this) {
      on = false;
      ts = new ArrayList<>(tasks);
      jobCount = jobs;
      jobStart = firstJobStart;
      stageSubmitted = firstStageSubmitted;
    }
    Map<String, Long> gpu = SparkJobs.gpuMetrics(df);
    Map<String, Double> parts = new LinkedHashMap<>();
    parts.put("plan_s", planS);
    parts.put("collect_s", collectS);
    parts.put("jobs", (double) jobCount);
    parts.put("tasks", (double) ts.size());
    if (!ts.isEmpty()) {
      long first = ts.stream().mapToLong(Task::launch).min().orElseThrow();
      long last = ts.stream().mapToLong(Task::finish).max().orElseThrow();
      parts.put("to_first_task_s", Math.max(0, first - wall0) / 1e3);
      if (jobStart > 0 && stageSubmitted >= jobStart && first >= stageSubmitted) {
        // to_first_task_s in three: the driver before the job (adaptive stage planning, the UI's plan
        // strings), the scheduler's stage creation, then task serialization, broadcast and launch
        parts.put("to_job_start_s", Math.max(0, jobStart - wall0) / 1e3);
        parts.put("job_to_stage_s", (stageSubmitted - jobStart) / 1e3);
        parts.put("stage_to_first_task_s", (first - stageSubmitted) / 1e3);
      }
      parts.put("tasks_span_s", (last - first) / 1e3);
      parts.put("after_last_task_s", Math.max(0, wall1 - last) / 1e3);
      parts.put("task_run_median_s", median(ts.stream().mapToLong(Task::run).toArray()) / 1e3);
      parts.put("task_run_max_s", ts.stream().mapToLong(Task::run).max().orElseThrow() / 1e3);
      parts.put("task_deserialize_sum_s", ts.stream().mapToLong(Task::deserialize).sum() / 1e3);
      // the gap between stages: the last task of one stage to the first of the next (adaptive
      // re-planning, the next job's submission, shuffle-stage scheduling)
      List<Integer> stages = ts.stream().map(Task::stage).distinct().sorted().toList();
      long gaps = 0;
      for (int s = 1; s < stages.size(); s++) {
        int prev = stages.get(s - 1);
        int next = stages.get(s);
        long prevEnd = ts.stream().filter(t -> t.stage == prev).mapToLong(Task::finish).max().orElseThrow();
        long nextStart = ts.stream().filter(t -> t.stage == next).mapToLong(Task::launch).min().orElseThrow();
        gaps += Math.max(0, nextStart - prevEnd);
      }
      parts.put("stages", (double) stages.size());
      parts.put("between_stages_s", gaps / 1e3);
      int lastStage = stages.get(stages.size() - 1);
      parts.put("last_stage_span_s", (last - ts.stream().filter(t -> t.stage == lastStage).mapToLong(Task::launch)
          .min().orElseThrow()) / 1e3);
      parts.put("scheduler_delay_median_s", median(ts.stream().mapToLong(t -> Math.max(0, t.finish - t.launch - t.run
          - t.deserialize - t.resultSerialize - t.gettingResult)).toArray()) / 1e3);
    }
    for (String k : List.of("hostTime", "deviceTime", "waitTime", "semaphoreWaitTime", "deviceCacheCopyTime")) {
      if (gpu.containsKey(k)) {
        parts.put("gpu_" + k + "_s", gpu.get(k) / 1e9); // summed over the query's tasks
      }
    }
    for (String k : List.of("gpuDispatches", "readbackBytes", "uploadBytes", "bufferSetsRecorded", "deviceCacheHits")) {
      if (gpu.containsKey(k)) {
        parts.put("gpu_" + k, (double) gpu.get(k));
      }
    }
    aggregateMetrics(df).forEach((k, v) -> parts.put("agg_" + k, (double) v));
    if (before != null && after != null) {
      parts.put("command_buffers_created", (double) (after.commandBuffersCreated() - before.commandBuffersCreated()));
      parts.put("descriptor_sets_created", (double) (after.descriptorSetsCreated() - before.descriptorSetsCreated()));
      parts.put("buffers_created", (double) (after.buffersCreated() - before.buffersCreated()));
      parts.put("dispatches_submitted", (double) (after.dispatchesSubmitted() - before.dispatchesSubmitted()));
    }
    return new Measured(new Cells.Run(collectS, rows, gpu), parts);
  }

  /** The fused aggregate nodes' metrics, summed ({@code gpuReducedRows}, {@code aggregatedRows}, ...). */
  private static Map<String, Long> aggregateMetrics(Dataset<Row> df) {
    Map<String, Long> out = new LinkedHashMap<>();
    SparkJobs.visit(df.queryExecution().executedPlan(), p -> {
      if ("VkGpuAggregate".equals(p.nodeName())) {
        SparkJobs.metrics(p).forEach((k, v) -> out.merge(k, v, Long::sum));
      }
    });
    return out;
  }

  private static DeviceCounters counters() {
    return ExecutorDevice.current().map(d -> d.device().counters()).orElse(null);
  }

  private static double median(long[] v) {
    long[] s = v.clone();
    Arrays.sort(s);
    return s.length == 0 ? 0 : s[s.length / 2];
  }

  /** Each part's median over {@code parts} (one map per query). */
  static Map<String, Double> medians(List<Map<String, Double>> parts) {
    Map<String, Double> out = new LinkedHashMap<>();
    if (parts.isEmpty()) {
      return out;
    }
    for (String k : parts.get(0).keySet()) {
      double[] v = parts.stream().filter(p -> p.containsKey(k)).mapToDouble(p -> p.get(k)).toArray();
      out.put(k, Math.round(Cells.median(v) * 1e6) / 1e6);
    }
    return out;
  }
}
