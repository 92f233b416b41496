#!/usr/bin/env bash
# Runs vkspark's test suites, the demo and the benchmarks from prebuilt jars, with no Maven: for a
# GPU machine that has a Java runtime and a Vulkan driver but no build tools (see docs/RELIABILITY.md
# for how the H200 runs were made). Every JVM's exit code is checked and printed.
#
#   scripts/kit-suite.sh JARS CPDIR OUT [STEP...]
#     JARS   a folder holding every jar: the modules' jars, their test jars (gpu-core-tests.jar,
#            spark-plugin-tests.jar, examples-tests.jar), their dependencies and
#            junit-platform-console-standalone-*.jar
#     CPDIR  per-module classpath lists, one jar file name per line: gpu-core.cp, spark-plugin.cp,
#            examples.cp (scripts/kit-suite.sh --lists CPDIR writes them here, with Maven)
#     OUT    where logs and JUnit reports go
#     STEP   any of: gpu-core spark-plugin examples demo bench bounded-time double-rounding contraction (default:
#            the first five, in that order); suites runs gpu-core, spark-plugin and examples side by side
#            (then, say, demo: "suites demo" is the whole check of a GPU machine in one command);
#            bounded-time runs io.vkspark.gpu.column.BoundedTimeProbe (is the abort word seen by a
#            running kernel on this GPU?); double-rounding runs the tests of correctly rounded double /
#            and sqrt (DoubleRoundingTest, DoubleDivisionBodyTest: the probe's verdict, a million pairs
#            refined, bodies bit for bit) and DoubleRoundingBench
#            (what refining costs on the Black-Scholes and implied-volatility bodies); contraction runs
#            ContractionBench (NoContraction against spark.vkspark.fastMath on Black-Scholes, implied
#            volatility and haversine, device time)
# Prints "[kit-suite] <step> exit <code>" per JVM and ends with "[kit-suite] OK" or exits 1.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

if [ "${1:-}" = "--lists" ]; then   # on the build machine: write the classpath lists
  out="${2:?--lists needs a folder}"
  mkdir -p "$out"
  for m in gpu-core spark-plugin examples; do
    (cd "$root" && mvn -B -q -o -pl "$m" dependency:build-classpath -Dmdep.includeScope=test \
      -Dmdep.outputFile="$out/$m.raw" >/dev/null) || exit 1
    tr ':' '\n' <"$out/$m.raw" | xargs -n1 basename | grep -v 'natives-linux-arm64' >"$out/$m.cp"
    rm -f "$out/$m.raw"
  done
  exit 0
fi

jars="${1:?usage: kit-suite.sh JARS CPDIR OUT [STEP...]}"
cpdir="$(cd "${2:?CPDIR}" && pwd)"   # absolute: each suite runs in its own folder
out="${3:?OUT}"
shift 3
steps="${*:-gpu-core spark-plugin examples demo bench}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
jars="$(cd "$jars" && pwd)"
flags="$(sed -n 's:.*<spark.jvm.flags>\(.*\)</spark.jvm.flags>.*:\1:p' "$root/pom.xml" | head -n1)"
console=$(ls "$jars"/junit-platform-console-standalone-*.jar | head -n1)
rm -rf "$out/docs" "$out/scripts" && cp -r "$root/docs" "$root/scripts" "$root/README.md" "$out/"   # tests read ../docs, ../scripts and ../README.md from their work folder, as under Maven
failed=0

classpath() {   # module -> its jars, its test jar and its dependencies, ':'-separated
  # (the Spark Connect JVM client is shaded and clashes with spark-sql on one class path: as under
  # Maven, SparkConnectTest gets it by path, -Dvkspark.connect.client/shims, never on the class path)
  local m=$1 cp
  cp="$jars/$m-tests.jar"
  case $m in
    gpu-core) cp="$cp:$jars/vkspark-gpu-core-0.1.0-SNAPSHOT.jar" ;;
    spark-plugin) cp="$cp:$jars/vkspark-spark-plugin-0.1.0-SNAPSHOT.jar" ;;
    examples) cp="$cp:$jars/vkspark-examples-0.1.0-SNAPSHOT.jar" ;;
  esac
  while IFS= read -r j; do
    case $j in spark-connect-client-jvm_*|spark-connect-shims_*) continue ;; esac
    [ -f "$jars/$j" ] && cp="$cp:$jars/$j"
  done <"$cpdir/$m.cp"
  echo "$cp"
}

check() {   # step name, exit code, log: print and remember a failure
  echo "[kit-suite] $1 exit $2"
  if [ "$2" != 0 ] || grep -q 'A fatal error has been detected' "$3"; then
    echo "[kit-suite] $1 FAILED (log: $3)"
    # each failure's head (JUnit's "=>" line and what follows, stack frames left out), then the log's tail:
    # this output is often all that comes back from a GPU machine
    grep -A 60 'MethodSource' "$3" | grep -v -E '^\s+(at |org\.junit|java\.base/)' | head -n 600
    tail -n 40 "$3"; failed=1
  fi
}

suite() {   # module, extra JVM flags
  local m=$1; shift
  local log="$out/$m-tests.log"
  mkdir -p "$out/work-$m"
  # KIT_SELECT="io.vkspark.a.ATest io.vkspark.b.BTest": only those classes (a re-run of failures), else every test of the module
  local select=(--scan-class-path "$jars/$m-tests.jar")
  if [ -n "${KIT_SELECT:-}" ]; then
    select=()   # only this module's classes, by package (a class of another module cannot load here)
    local pkg; case $m in gpu-core) pkg=io.vkspark.gpu. ;; spark-plugin) pkg=io.vkspark.spark. ;; *) pkg=io.vkspark.examples. ;; esac
    for c in $KIT_SELECT; do
      case $c in "$pkg"*) select+=(--select-class "$c") ;; esac
    done
    if [ ${#select[@]} -eq 0 ]; then echo "[kit-suite] $m: none of KIT_SELECT"; return 0; fi
  fi
  # KIT_TIMEOUT=SECONDS: a suite still running then is killed (exit 124) and the next step runs;
  # KIT_JAVA_OPTS: more JVM flags for the suites and the benches (-Dvkspark.translate.only=G4.m18 with KIT_SELECT, say)
  (cd "$out/work-$m" && timeout "${KIT_TIMEOUT:-0}" java "$@" ${KIT_JAVA_OPTS:-} -Dvkspark.validation=true -Dvkspark.source.root="$root" -XX:ErrorFile="$out/hs_err_$m.log" \
      -cp "$console:$(classpath "$m")" org.junit.platform.console.ConsoleLauncher execute "${select[@]}" \
      --details=summary --disable-banner --reports-dir="$out/reports-$m") >"$log" 2>&1
  local rc=$?
  grep -E 'tests (successful|failed|aborted|found)' "$log" | sed "s/^/[kit-suite] $m: /"
  check "$m tests" "$rc" "$log"
}

run_step() {   # one step, as listed above
  local s=$1
  case $s in
    gpu-core) suite gpu-core --add-opens=java.base/java.nio=ALL-UNNAMED ;;
    spark-plugin)
      connect=()
      for j in "$jars"/spark-connect-client-jvm_*.jar; do [ -f "$j" ] && connect+=("-Dvkspark.connect.client=$j"); done
      for j in "$jars"/spark-connect-shims_*.jar; do [ -f "$j" ] && connect+=("-Dvkspark.connect.shims=$j"); done
      suite spark-plugin $flags -Xmx16g "${connect[@]}" ;;
    examples) suite examples $flags -Xmx16g -Duser.timezone=America/Los_Angeles ;;
    demo)
      java $flags -Dlog4j2.configurationFile="$root/scripts/log4j2-demo.properties" \
        -cp "$(classpath examples)" io.vkspark.examples.Demo "${DEMO_ROWS:-2000000}" >"$out/demo.log" 2>&1
      check demo $? "$out/demo.log"; grep -E '^\[demo\]' "$out/demo.log" | tail -n 6 ;;
    bench)
      java -cp "$(classpath gpu-core)" io.vkspark.gpu.bench.CoreBench ${BENCH_ARGS:-} >"$out/core-bench.json" 2>"$out/core-bench.log"
      check core-bench $? "$out/core-bench.log"
      java $flags -Xmx32g -Dlog4j2.configurationFile="$root/scripts/log4j2-demo.properties" \
        -cp "$(classpath examples)" io.vkspark.examples.bench.SparkBench ${SPARK_BENCH_ARGS:---rows 5000000 --iv-rows 200000 --runs 3} \
        >"$out/spark-bench.json" 2>"$out/spark-bench.log"
      check spark-bench $? "$out/spark-bench.log" ;;
    bounded-time)
      java --add-opens=java.base/java.nio=ALL-UNNAMED -cp "$(classpath gpu-core)" io.vkspark.gpu.column.BoundedTimeProbe \
        >"$out/bounded-time.log" 2>&1
      check bounded-time $? "$out/bounded-time.log"; grep -v '^[0-9:. ]*\[' "$out/bounded-time.log" | tail -n 12 ;;
    double-rounding)
      log="$out/double-rounding-tests.log"
      mkdir -p "$out/work-gpu-core"
      (cd "$out/work-gpu-core" && java --add-opens=java.base/java.nio=ALL-UNNAMED -Dvkspark.validation=true \
          -cp "$console:$(classpath gpu-core)" org.junit.platform.console.ConsoleLauncher execute \
          --select-class io.vkspark.gpu.internal.DoubleRoundingTest --select-class io.vkspark.gpu.column.DoubleDivisionBodyTest \
          --details=tree --disable-banner --reports-dir="$out/reports-double-rounding") >"$log" 2>&1
      check double-rounding-tests $? "$log"; grep -E 'opened Vulkan device|tests (successful|failed)' "$log" | sed 's/.*features: //' | sort -u | tail -n 8
      java $flags -cp "$(classpath examples)" io.vkspark.examples.bench.DoubleRoundingBench ${DOUBLE_ROUNDING_ARGS:-} \
        >"$out/double-rounding-bench.json" 2>"$out/double-rounding-bench.log"
      check double-rounding-bench $? "$out/double-rounding-bench.log"; cat "$out/double-rounding-bench.json" ;;
    contraction)   # what NoContraction costs against spark.vkspark.fastMath (CONTRACTION_ARGS: rows ivRows runs)
      java $flags -cp "$(classpath examples)" io.vkspark.examples.bench.ContractionBench ${CONTRACTION_ARGS:-} \
        >"$out/contraction-bench.json" 2>"$out/contraction-bench.log"
      check contraction-bench $? "$out/contraction-bench.log"; cat "$out/contraction-bench.json" ;;
    benches)
      # KIT_BENCHES="SweepBench --rows 10000000 ...; MatrixBench ...": examples' benchmarks (io.vkspark.examples.bench),
      # one after the other, each for at most KIT_BENCH_TIMEOUT seconds, JSON to OUT/bench-<Class>-<n>.json
      n=0
      IFS=';' read -ra benches <<<"${KIT_BENCHES:?benches needs KIT_BENCHES}"
      for b in "${benches[@]}"; do
        read -ra words <<<"$b"
        [ ${#words[@]} -gt 0 ] || continue
        n=$((n + 1)); cls=${words[0]}; log="$out/bench-$cls-$n.log"
        mkdir -p "$out/work-bench" && (cd "$out/work-bench" && timeout "${KIT_BENCH_TIMEOUT:-0}" java $flags ${KIT_JAVA_OPTS:-} -Xmx${KIT_BENCH_HEAP:-64g} \
          -Dlog4j2.configurationFile="$root/scripts/log4j2-demo.properties" -cp "$(classpath examples)" \
          "io.vkspark.examples.bench.$cls" "${words[@]:1}" >"$out/bench-$cls-$n.json" 2>"$log")
        check "bench $cls" $? "$log"
      done ;;
    *) echo "[kit-suite] unknown step $s" >&2; exit 2 ;;
  esac
}

for s in $steps; do
  if [ "$s" = suites ]; then
    # the three test suites side by side, each JVM on its own (a GPU machine has the cores and the
    # memory), waited for by process id; then each one's output, in order
    pids=()
    for m in gpu-core spark-plugin examples; do
      ( failed=0; run_step "$m"; exit $failed ) >"$out/suites-$m.out" 2>&1 &
      pids+=($!)
    done
    i=0
    for m in gpu-core spark-plugin examples; do
      wait "${pids[$i]}" || failed=1
      cat "$out/suites-$m.out"
      i=$((i + 1))
    done
  else
    run_step "$s"
  fi
done
[ $failed = 0 ] && echo "[kit-suite] OK" || { echo "[kit-suite] FAILED"; exit 1; }
