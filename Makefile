# vkspark: `make test` and `make demo` work on a fresh machine (they install the Vulkan runtime
# when it is missing: Mesa's lavapipe runs everything on the CPU when there is no GPU).
MVN       ?= mvn -B -ntp
JAVA      ?= java
VERSION   := 0.1.0-SNAPSHOT
SPARK_JVM := $(shell sed -n 's:.*<spark.jvm.flags>\(.*\)</spark.jvm.flags>.*:\1:p' pom.xml) -Dlog4j2.configurationFile=$(CURDIR)/scripts/log4j2-demo.properties
# Spark lines (Maven profiles of pom.xml; README "Spark versions"): the default line gets every
# module's tests (`make test`), the others the Spark-facing ones (spark-plugin, examples, the
# cluster test) through `make test-lines` (or one: `make test-line LINE=spark3.5_2.12`).
DEFAULT_LINE := spark4.2_2.13
LINES        := spark3.5_2.12 spark3.5_2.13 spark4.0_2.13 spark4.1_2.13
LINE         ?= $(DEFAULT_LINE)
# spark-plugin and examples build in target/ for the default line, target/LINE/ for the others.
LINE_DIR     := target$(if $(filter $(DEFAULT_LINE),$(LINE)),,/$(LINE))
PLUGIN_JAR   := spark-plugin/target/vkspark-$(LINE)-$(VERSION).jar
EXAMPLES_JAR := examples/$(LINE_DIR)/vkspark-examples-$(VERSION).jar
CLUSTER_DIR  := $(CURDIR)/target/cluster-test$(if $(filter $(DEFAULT_LINE),$(LINE)),,-$(LINE))
# Rows for the demo and for the cluster test's job.
DEMO_ROWS    ?= 2000000
CLUSTER_ROWS ?= 200000
# The H200 runs used: --rows 50000000 --iv-rows 5000000 (see docs/BENCHMARKS.md).
SPARK_BENCH_ARGS ?= --rows 5000000 --iv-rows 200000 --runs 3
# Issue 13's DataPathBench (where the time goes, Parquet side by side, cache serializers); H200 args in docs/BENCHMARKS.md.
DATA_PATH_BENCH_ARGS ?= --rows 5000000 --iv-rows 200000 --runs 3
# Heap of the Spark benchmarks (the H200 runs used 48g to 64g).
BENCH_HEAP ?= 8g
# Issue 23's comparison (`make bench-translate`): plain Java UDF translated from bytecode, hand-written
# GPU UDF, the Java UDF on the CPU and built-in SQL, on ROWS cached rows (implied volatility on IV_ROWS of
# them, IV_RUNS timed runs; IV_SQL=false leaves out its slow SQL form); TRANSLATE_BENCH_ARGS adds SparkBench flags.
ROWS    ?= 50000000
IV_ROWS ?= $(ROWS)
RUNS    ?= 3
IV_RUNS ?= 1
IV_SQL  ?= true
TRANSLATE_BENCH_ARGS ?= --out target/bench-translate.json
# Issue 31's Scala closure benchmark (`make bench-scala`): Black-Scholes as a Scala closure against its Java
# twin (both translated), the closure on the CPU and built-in SQL, on ROWS cached rows, RUNS timed runs.
SCALA_BENCH_ARGS ?= --out target/bench-scala.json
# Issue 24's matrix (`make bench-matrix`: six UDFs over Parquet and vkspark's cache, GPU adaptive and forced,
# built-in SQL, Java UDF) and issue 25's scenario sweep (`make bench-sweep`: 20 priced scenarios over one
# cache, device-resident, host and Spark's cache, built-in SQL). Small defaults for a 2-core box; the
# H200 command lines are in docs/BENCHMARKS.md.
MATRIX_BENCH_ARGS ?= --rows 1000000 --iv-rows 200000 --runs 3 --iv-runs 1 --collatz-sql-rows 2000 --out target/bench-matrix.json
SWEEP_BENCH_ARGS  ?= --rows 1000000 --iv-rows 200000 --queries 20 --iv-queries 2 --runs 3 --iv-runs 1 --out target/bench-sweep.json
# Issue 32's string UDFs (`make bench-strings`: a normalized name and an email's domain, string results, over
# Parquet and vkspark's cache: GPU UDF adaptive and forced, built-in SQL, Java UDF). H200: --rows 50000000.
STRINGS_BENCH_ARGS ?= --rows 1000000 --runs 3 --out target/bench-strings.json

# The tests ask for the Khronos validation layer: `make test` installs it and makes its absence an
# error; elsewhere (mvn alone, a newcomer's machine) a missing layer only warns (README "Building").
test test-lines test-line cluster-test: export VKSPARK_VALIDATION_REQUIRED = 1

.PHONY: all build javadoc test test-lines test-line demo bench bench-data-path bench-translate bench-scala bench-matrix bench-sweep bench-strings bench-contraction cluster-test cluster-test-gpus vulkan vulkan-runtime clean

all: build

vulkan:
	@bash scripts/ensure-vulkan.sh

vulkan-runtime:
	@bash scripts/ensure-vulkan.sh --runtime

build:
	$(MVN) -q -DskipTests install

examples/target/classpath.txt: build
	$(MVN) -q -pl examples dependency:build-classpath -Dmdep.outputFile=target/classpath.txt -Dmdep.includeScope=compile >/dev/null

## javadoc: the user API only (io.vkspark.spark.api and the plugin class) as HTML in target/javadoc;
## every other package is vkspark's own (docs/ARCHITECTURE.md)
javadoc: examples/target/classpath.txt
	javadoc -quiet -Xdoclint:none -d target/javadoc -cp $$(cat examples/target/classpath.txt) \
	  spark-plugin/src/main/java/io/vkspark/spark/api/*.java spark-plugin/src/main/java/io/vkspark/spark/VkSparkPlugin.java

## test: every module's tests on a real Vulkan driver (validation layer on), then a real standalone
## cluster, on Spark 4.2; then the Spark-facing suites on every other Spark line (test-lines)
test: vulkan
	$(MVN) install
	$(MAKE) --no-print-directory cluster-test
	$(MAKE) --no-print-directory test-lines

## test-lines: spark-plugin and examples tests and the cluster test on each line of LINES, one after the other
test-lines: vulkan
	@for l in $(LINES); do \
	  t0=$$(date +%s); \
	  $(MAKE) --no-print-directory test-line LINE=$$l || exit 1; \
	  echo "[test-lines] $$l passed in $$(( $$(date +%s) - t0 )) s"; \
	done

## test-line LINE=...: one line's spark-plugin and examples tests (gpu-core is built, not tested:
## it has no Spark; the examples' own UDF, job and benchmark tests, tagged defaultLineOnly, run on the
## default line only), then its cluster test. Nothing is installed into ~/.m2.
test-line: vulkan
	$(MVN) -P$(LINE) -pl spark-plugin,examples -am verify
	$(MAKE) --no-print-directory cluster-test LINE=$(LINE)

## demo: Black-Scholes through a GPU UDF in Spark SQL on the best Vulkan device present
demo: vulkan-runtime examples/target/classpath.txt
	$(JAVA) $(SPARK_JVM) -cp $(EXAMPLES_JAR):$$(cat examples/target/classpath.txt) io.vkspark.examples.Demo $(DEMO_ROWS)

## cluster-test: Spark standalone master + 2 workers on 127.0.0.1, spark-submit with the plugin jar
## (LINE=... for another Spark line: its SPARK_HOME, plugin and examples jars)
cluster-test: vulkan-runtime
	@test -f $(PLUGIN_JAR) -a -f $(EXAMPLES_JAR) || $(MVN) -q -P$(LINE) -pl spark-plugin,examples -am -DskipTests package
	eval "$$(bash scripts/spark-line.sh $(LINE))" && export SPARK_VERSION SCALA_BINARY_VERSION && \
	SPARK_HOME_DIR=$(CURDIR)/target/spark-home-$(LINE) CLUSTER_TEST_DIR=$(CLUSTER_DIR) \
	bash scripts/cluster-test.sh $(CLUSTER_FLAGS) --jar $(EXAMPLES_JAR) --class io.vkspark.examples.OptionsJob \
	  --extra-jars $(PLUGIN_JAR) \
	  --conf spark.plugins=io.vkspark.spark.VkSparkPlugin \
	  --conf spark.vkspark.shaderCacheDir=$(CLUSTER_DIR)/shader-cache \
	  --conf spark.vkspark.placement=gpu \
	  --expect-executors 2 --check 'bash $(CURDIR)/scripts/cluster-check.sh $(CHECK_FLAGS)' \
	  -- $(CLUSTER_DIR)/options.parquet --generate $(CLUSTER_ROWS)

## cluster-test-gpus: the same with Spark's GPU scheduling, one GPU per Worker (needs a host with 2 GPUs)
cluster-test-gpus: vulkan-runtime
	$(MAKE) --no-print-directory cluster-test CLUSTER_FLAGS=--worker-gpus CHECK_FLAGS=--gpus

## bench: gpu-core and Spark benchmarks, one JSON line per case (absolute times count only from the H200 machine)
bench: vulkan-runtime examples/target/classpath.txt
	$(MVN) -q -pl gpu-core dependency:build-classpath -Dmdep.outputFile=target/classpath.txt -Dmdep.includeScope=test >/dev/null
	$(JAVA) -cp gpu-core/target/classes:gpu-core/target/test-classes:$$(cat gpu-core/target/classpath.txt) io.vkspark.gpu.bench.CoreBench $(BENCH_ARGS)
	$(JAVA) $(SPARK_JVM) -Xmx$(BENCH_HEAP) -cp $(EXAMPLES_JAR):$$(cat examples/target/classpath.txt) io.vkspark.examples.bench.SparkBench $(SPARK_BENCH_ARGS)
	$(JAVA) $(SPARK_JVM) -Xmx$(BENCH_HEAP) -cp $(EXAMPLES_JAR):$$(cat examples/target/classpath.txt) io.vkspark.examples.bench.DataPathBench $(DATA_PATH_BENCH_ARGS)

## bench-data-path: only issue 13's DataPathBench (breakdown, Parquet side by side, cache serializers)
bench-data-path: vulkan-runtime examples/target/classpath.txt
	$(JAVA) $(SPARK_JVM) -Xmx$(BENCH_HEAP) -cp $(EXAMPLES_JAR):$$(cat examples/target/classpath.txt) io.vkspark.examples.bench.DataPathBench $(DATA_PATH_BENCH_ARGS)

## bench-translate: only issue 23's comparison, e.g. `make bench-translate ROWS=50000000` (docs/BENCHMARKS.md)
bench-translate: vulkan-runtime examples/target/classpath.txt
	$(JAVA) $(SPARK_JVM) -Xmx$(BENCH_HEAP) -cp $(EXAMPLES_JAR):$$(cat examples/target/classpath.txt) io.vkspark.examples.bench.SparkBench \
	  --cases translate --source cache --rows $(ROWS) --iv-rows $(IV_ROWS) --runs $(RUNS) --iv-runs $(IV_RUNS) --iv-sql $(IV_SQL) \
	  $(TRANSLATE_BENCH_ARGS)

## bench-scala: issue 31's Scala closure vs its Java twin, e.g. `make bench-scala ROWS=50000000 BENCH_HEAP=64g` (docs/BENCHMARKS.md)
bench-scala: vulkan-runtime examples/target/classpath.txt
	$(JAVA) $(SPARK_JVM) -Xmx$(BENCH_HEAP) -cp $(EXAMPLES_JAR):$$(cat examples/target/classpath.txt) io.vkspark.examples.bench.ScalaBench \
	  --rows $(ROWS) --runs $(RUNS) $(SCALA_BENCH_ARGS)

## bench-contraction: what NoContraction costs against spark.vkspark.fastMath (Black-Scholes, implied volatility,
## haversine; device time per batch), e.g. `make bench-contraction CONTRACTION_BENCH_ARGS='4194304 262144 7'`
bench-contraction: vulkan-runtime examples/target/classpath.txt
	$(JAVA) -cp $(EXAMPLES_JAR):$$(cat examples/target/classpath.txt) io.vkspark.examples.bench.ContractionBench $(CONTRACTION_BENCH_ARGS)

## bench-matrix: only issue 24's matrix, e.g. `make bench-matrix MATRIX_BENCH_ARGS='--rows 50000000 ...'` (docs/BENCHMARKS.md)
bench-matrix: vulkan-runtime examples/target/classpath.txt
	$(JAVA) $(SPARK_JVM) -Xmx$(BENCH_HEAP) -cp $(EXAMPLES_JAR):$$(cat examples/target/classpath.txt) io.vkspark.examples.bench.MatrixBench $(MATRIX_BENCH_ARGS)

## bench-strings: only issue 32's string UDFs, e.g. `make bench-strings STRINGS_BENCH_ARGS='--rows 50000000 ...'` (docs/BENCHMARKS.md)
bench-strings: vulkan-runtime examples/target/classpath.txt
	$(JAVA) $(SPARK_JVM) -Xmx$(BENCH_HEAP) -cp $(EXAMPLES_JAR):$$(cat examples/target/classpath.txt) io.vkspark.examples.bench.StringBench $(STRINGS_BENCH_ARGS)

## bench-sweep: only issue 25's scenario sweep, e.g. `make bench-sweep SWEEP_BENCH_ARGS='--rows 50000000 ...'` (docs/BENCHMARKS.md)
bench-sweep: vulkan-runtime examples/target/classpath.txt
	$(JAVA) $(SPARK_JVM) -Xmx$(BENCH_HEAP) -cp $(EXAMPLES_JAR):$$(cat examples/target/classpath.txt) io.vkspark.examples.bench.SweepBench $(SWEEP_BENCH_ARGS)

clean:
	$(MVN) -q clean
