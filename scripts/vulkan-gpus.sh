#!/usr/bin/env bash
# Spark GPU discovery script for vkspark: prints {"name": "gpu", "addresses": [<Vulkan device UUIDs>]}
# for the GPUs of this host, whatever their vendor (CPU devices such as lavapipe are left out).
#   --conf spark.executor.resource.gpu.amount=1
#   --conf spark.executor.resource.gpu.discoveryScript=/path/to/vulkan-gpus.sh
# VKSPARK_JAR names the plugin jar (default: the vkspark-*.jar next to this script or in the working directory).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
jar=${VKSPARK_JAR:-$(ls "$here"/vkspark-*.jar "$here"/../spark-plugin/target/vkspark-*.jar ./vkspark-*.jar 2>/dev/null | head -1 || true)}
[ -n "$jar" ] || { echo "vulkan-gpus.sh: set VKSPARK_JAR to the vkspark plugin jar" >&2; exit 1; }
# SLF4J comes from Spark's jars (the plugin jar leaves it to Spark).
cp=$jar${SPARK_HOME:+:$SPARK_HOME/jars/*}
exec "${JAVA_HOME:+$JAVA_HOME/bin/}java" -cp "$cp" io.vkspark.gpu.tools.Devices --spark-resources
