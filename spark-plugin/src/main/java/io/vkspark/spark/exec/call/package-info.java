/**
 * A GPU UDF call as the planner leaves it for the executor: the call itself
 * ({@link io.vkspark.spark.exec.call.GpuUdfCall}, with the kind of UDF it calls), where it runs and
 * why ({@link io.vkspark.spark.exec.call.Placement}), the arguments its kernel computes
 * ({@link io.vkspark.spark.exec.call.DeviceArg}), and the node's metrics. Its own package because the
 * planner, the CPU path and the node all read it, and it reads none of them.
 *
 * <p>May import: shim, conf, api, udf.
 */
package io.vkspark.spark.exec.call;
