# vkspark: `make test` and `make demo` work on a fresh machine (they install the Vulkan runtime
# when it is missing: Mesa's lavapipe runs everything on the CPU when there is no GPU).
MVN       ?= mvn -B -ntp
JAVA      ?= java
SPARK_JVM := $(shell sed -n 's:.*<spark.jvm.flags>\(.*\)</spark.jvm.flags>.*:\1:p' pom.xml)

.PHONY: all build test demo bench vulkan vulkan-runtime clean

all: build

vulkan:
	@bash scripts/ensure-vulkan.sh

vulkan-runtime:
	@bash scripts/ensure-vulkan.sh --runtime

build:
	$(MVN) -q -DskipTests install

## test: every module's tests on a real Vulkan driver, with the validation layer on
test: vulkan
	$(MVN) install

## demo: real GPU work on the best Vulkan device present
demo: vulkan-runtime build
	$(MVN) -q -pl gpu-core dependency:build-classpath -Dmdep.outputFile=target/classpath.txt -Dmdep.includeScope=runtime >/dev/null
	$(JAVA) -cp gpu-core/target/classes:$$(cat gpu-core/target/classpath.txt) io.vkspark.gpu.tools.Demo

## bench: benchmarks, one JSON line per case (absolute times count only from the H200 machine)
bench: vulkan-runtime build
	$(MVN) -q -pl gpu-core dependency:build-classpath -Dmdep.outputFile=target/classpath.txt -Dmdep.includeScope=test >/dev/null
	$(JAVA) -cp gpu-core/target/classes:gpu-core/target/test-classes:$$(cat gpu-core/target/classpath.txt) io.vkspark.gpu.bench.CoreBench

clean:
	$(MVN) -q clean
