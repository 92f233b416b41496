package io.vkspark.spark;

import io.vkspark.spark.udf.ConfiguredUdfs;
import io.vkspark.spark.executor.CpuVulkan;
import io.vkspark.spark.executor.ExecutorDevice;
import io.vkspark.spark.glsl.GlslDefinitions;
import io.vkspark.spark.conf.VkConf;
import io.vkspark.spark.plan.VkExplain;

import com.codahale.metrics.Gauge;
import com.codahale.metrics.MetricRegistry;
import io.vkspark.gpu.DeviceCounters;
import io.vkspark.spark.udf.CountedFunction;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.ToLongFunction;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.api.plugin.SparkPlugin;
import org.apache.spark.resource.ResourceInformation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * vkspark's Spark plugin: {@code spark.plugins=io.vkspark.spark.VkSparkPlugin} is the only setting
 * a user needs. The driver part adds the SQL extensions (and the EXPLAIN section) to the
 * application's configuration; the executor part opens the executor's Vulkan device, publishes
 * its counters to Spark's metric system, and closes it at shutdown. Local mode runs both parts in
 * one JVM.
 */
public final class VkSparkPlugin implements SparkPlugin {
  private static final Logger LOG = LoggerFactory.getLogger(VkSparkPlugin.class);
  static final String EXTENSIONS = "spark.sql.extensions";
  static final String EXPLAIN_PROVIDERS = "spark.sql.extendedExplainProviders";

  @Override
  public DriverPlugin driverPlugin() {
    return new DriverPlugin() {
      @Override
      public Map<String, String> init(SparkContext sc, PluginContext ctx) {
        SparkConf conf = sc.conf();
        // A bad setting or functions class fails the application at start, with its Fix. Failing here,
        // while the SparkContext is being built, makes Spark stop it: a corrected builder in the same
        // JVM then gets a new context instead of this one with its bad configuration.
        VkConf vk = VkConf.from(conf);
        ConfiguredUdfs.javaFunctions(vk, Thread.currentThread().getContextClassLoader());
        GlslDefinitions.checkNoClash(ConfiguredUdfs.configured(vk, Thread.currentThread().getContextClassLoader()),
            GlslDefinitions.configured(vk));
        append(conf, EXTENSIONS, VkSqlExtensions.class.getName());
        append(conf, EXPLAIN_PROVIDERS, VkExplain.class.getName());
        LOG.info("vkspark: SQL extensions installed for application {}", conf.get("spark.app.name", "?"));
        return Map.of();
      }
    };
  }

  @Override
  public ExecutorPlugin executorPlugin() {
    return new ExecutorPlugin() {
      @Override
      public void init(PluginContext ctx, Map<String, String> extraConf) {
        VkConf conf = VkConf.from(ctx.conf());
        ResourceInformation gpu = ctx.resources().get("gpu");
        String address = gpu == null || gpu.addresses().length == 0 ? null : gpu.addresses()[0];
        if (gpu != null && gpu.addresses().length > 1) {
          LOG.warn("executor {} was assigned {} GPUs ({}); vkspark uses one device per executor: {}",
              ctx.executorID(), gpu.addresses().length, Arrays.toString(gpu.addresses()), address);
        }
        ExecutorDevice.init(conf, ctx.executorID(), address);
        register(ctx.metricRegistry());
      }

      @Override
      public void shutdown() {
        try {
          ExecutorDevice.shutdown();
        } finally {
          CpuVulkan.shutdown();
        }
      }
    };
  }

  private static void register(MetricRegistry registry) {
    gauge(registry, "dispatches", DeviceCounters::dispatchesSubmitted);
    gauge(registry, "bytesWritten", DeviceCounters::bytesWritten);
    gauge(registry, "bytesRead", DeviceCounters::bytesRead);
    gauge(registry, "deviceTimeNs", DeviceCounters::deviceNs);
    gauge(registry, "buffersLive", DeviceCounters::buffersLive);
    gauge(registry, "bufferBytesLive", DeviceCounters::bufferBytesLive);
    gauge(registry, "commandBuffersCreated", DeviceCounters::commandBuffersCreated);
    gauge(registry, "descriptorSetsCreated", DeviceCounters::descriptorSetsCreated);
    registry.register("deviceAvailable", (Gauge<Integer>) () -> ExecutorDevice.current().isPresent() ? 1 : 0);
    registry.register("cpuRowsOutsideNode", (Gauge<Long>) CountedFunction.ROWS::sum);
  }

  private static void gauge(MetricRegistry registry, String name, ToLongFunction<DeviceCounters> f) {
    registry.register(name, (Gauge<Long>) () ->
        ExecutorDevice.current().map(g -> f.applyAsLong(g.device().counters())).orElse(0L));
  }

  /** Adds {@code value} to the comma-separated list {@code key}, once. */
  static void append(SparkConf conf, String key, String value) {
    Set<String> values = new LinkedHashSet<>();
    if (conf.contains(key)) {
      for (String v : conf.get(key).split(",")) {
        if (!v.isBlank()) {
          values.add(v.trim());
        }
      }
    }
    values.add(value);
    conf.set(key, String.join(",", values));
  }
}
