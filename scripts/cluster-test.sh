#!/usr/bin/env bash
# A real Spark standalone cluster on loopback: one Master, two Workers (1 core, 1 GiB each), one
# client-mode submission with two executors (one per Worker), then checks. Always stops what it
# started.
#
#   scripts/cluster-test.sh --jar APP_JAR --class MAIN_CLASS [--extra-jars JAR1,JAR2]
#       [--conf k=v ...] [--expect-executors N] [--check CMD] [--] [APP ARGS...]
#
#   --jar              the application jar (spark-submit's primary resource)
#   --class            its main class
#   --extra-jars       comma-separated jars for spark-submit --jars (driver and executors)
#   --conf k=v         more Spark settings (repeatable; they come after, so override, the defaults:
#                      spark.cores.max=2 spark.executor.cores=1 spark.executor.memory=1g
#                      spark.ui.enabled=false)
#   --expect-executors exactly this many executor logs must exist afterwards (default 2)
#   --worker-gpus      Spark GPU scheduling: each Worker owns one GPU (from scripts/vulkan-gpus.sh, so the
#                      host needs one GPU per Worker), each executor asks for it
#                      (spark.executor.resource.gpu.amount=1, spark.task.resource.gpu.amount=1)
#   --check CMD        run with bash -c after the cluster is stopped (logs complete); fails the test
#                      when it fails. Its environment:
#                        CLUSTER_WORK_DIR  the Workers' shared work dir: executor logs are
#                                          $CLUSTER_WORK_DIR/app-*/<executorId>/{stderr,stdout}
#                        DRIVER_OUT        the driver's stdout (what the app prints)
#                        DRIVER_LOG        the driver's stderr (Spark's log)
#                        CLUSTER_RUN_DIR   the run folder (master.log, worker-1.log, worker-2.log)
#                        CLUSTER_APP_ID    the application id (app-...)
#                        SPARK_HOME
#
# Environment: SPARK_HOME_DIR (default target/spark-home, built by scripts/spark-home.sh for
#   SPARK_VERSION and SCALA_BINARY_VERSION, default the root pom's: see scripts/spark-line.sh),
#   CLUSTER_TEST_DIR (default target/cluster-test; each run gets run-<date>-<pid>/ in it, the
#   latest is linked as latest/, the last CLUSTER_TEST_KEEP (5) runs are kept),
#   CLUSTER_TEST_START_TIMEOUT (90 s: Master up + both Workers registered),
#   CLUSTER_TEST_SUBMIT_TIMEOUT (300 s: the whole spark-submit), CLUSTER_TEST_CHECK_TIMEOUT (120 s),
#   CLUSTER_TEST_DRIVER_XMX (1g), JAVA_HOME.
# Prints "[cluster-test] OK ..." with timings, or "[cluster-test] FAILED: reason" (exit 1) after
# the tails of the relevant logs.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
T0=$(date +%s%3N)

say() { echo "[cluster-test] $*"; }
usage() {
  sed -n '6,7p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,3\}//' >&2
  exit 2
}
abspath() { local p="$1"; [ "${p#/}" != "$p" ] || p="$PWD/$p"; printf '%s\n' "$p"; }
now_ms() { date +%s%3N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) / 1000 }'; }

# ---------------------------------------------------------------- arguments
APP_JAR="" MAIN_CLASS="" EXTRA_JARS="" EXPECT_EXEC=2 CHECK_CMD="" WORKER_GPUS=0
USER_CONFS=() APP_ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --jar) APP_JAR="${2:?--jar needs a value}"; shift 2 ;;
    --class) MAIN_CLASS="${2:?--class needs a value}"; shift 2 ;;
    --extra-jars) EXTRA_JARS="${2:?--extra-jars needs a value}"; shift 2 ;;
    --conf) USER_CONFS+=(--conf "${2:?--conf needs k=v}"); shift 2 ;;
    --expect-executors) EXPECT_EXEC="${2:?--expect-executors needs a number}"; shift 2 ;;
    --check) CHECK_CMD="${2:?--check needs a command}"; shift 2 ;;
    --worker-gpus) WORKER_GPUS=1; shift ;;
    --) shift; APP_ARGS=("$@"); break ;;
    -h|--help) usage ;;
    *) echo "[cluster-test] unknown argument: $1" >&2; usage ;;
  esac
done
[ -n "$APP_JAR" ] && [ -n "$MAIN_CLASS" ] || usage
case "$EXPECT_EXEC" in ''|*[!0-9]*) echo "[cluster-test] --expect-executors: not a number" >&2; exit 2 ;; esac
[ -f "$APP_JAR" ] || { echo "[cluster-test] FAILED: no such jar: $APP_JAR" >&2; exit 1; }
APP_JAR="$(abspath "$APP_JAR")"
JARS_ARG=()
if [ -n "$EXTRA_JARS" ]; then
  IFS=',' read -r -a _jars <<<"$EXTRA_JARS"
  _abs=()
  for j in "${_jars[@]}"; do
    [ -n "$j" ] || continue
    [ -f "$j" ] || { echo "[cluster-test] FAILED: no such jar: $j" >&2; exit 1; }
    _abs+=("$(abspath "$j")")
  done
  JARS_ARG=(--jars "$(IFS=','; echo "${_abs[*]}")")
fi

START_TIMEOUT="${CLUSTER_TEST_START_TIMEOUT:-90}"
SUBMIT_TIMEOUT="${CLUSTER_TEST_SUBMIT_TIMEOUT:-300}"
CHECK_TIMEOUT="${CLUSTER_TEST_CHECK_TIMEOUT:-120}"
DRIVER_XMX="${CLUSTER_TEST_DRIVER_XMX:-1g}"
if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then JAVA="$JAVA_HOME/bin/java"; else JAVA=java; fi
command -v "$JAVA" >/dev/null || { echo "[cluster-test] FAILED: no java" >&2; exit 1; }
command -v timeout >/dev/null || { echo "[cluster-test] FAILED: no timeout (coreutils)" >&2; exit 1; }
SPARK_JVM_FLAGS="$(sed -n 's:.*<spark.jvm.flags>\(.*\)</spark.jvm.flags>.*:\1:p' "$ROOT/pom.xml" | head -n1)"
[ -n "$SPARK_JVM_FLAGS" ] || { echo "[cluster-test] FAILED: <spark.jvm.flags> not found in $ROOT/pom.xml" >&2; exit 1; }

# ---------------------------------------------------------------- SPARK_HOME
SPARK_HOME_DIR="${SPARK_HOME_DIR:-$ROOT/target/spark-home}"
bash "$ROOT/scripts/spark-home.sh" "$SPARK_HOME_DIR" \
  || { echo "[cluster-test] FAILED: could not assemble SPARK_HOME at $SPARK_HOME_DIR" >&2; exit 1; }
SPARK_HOME_DIR="$(cd "$SPARK_HOME_DIR" && pwd)"
T_HOME=$(now_ms)

# ---------------------------------------------------------------- run folder
BASE="${CLUSTER_TEST_DIR:-$ROOT/target/cluster-test}"
mkdir -p "$BASE"
BASE="$(cd "$BASE" && pwd)"
RUN_ID="run-$(date +%Y%m%d-%H%M%S)-$$"
RUN_DIR="$BASE/$RUN_ID"
WORK_DIR="$RUN_DIR/work"
mkdir -p "$RUN_DIR" "$WORK_DIR" "$RUN_DIR/local"
ln -sfn "$RUN_ID" "$BASE/latest" 2>/dev/null || true
# keep the last CLUSTER_TEST_KEEP runs
keep="${CLUSTER_TEST_KEEP:-5}"
ls -1d "$BASE"/run-* 2>/dev/null | sort | head -n "-$keep" | while IFS= read -r old; do
  [ "$old" != "$RUN_DIR" ] && rm -rf "$old"
done || true
MARK="-Dvkspark.cluster-test.run=$RUN_ID"   # on every JVM we start, to find them again
DRIVER_OUT="$RUN_DIR/driver.out"
DRIVER_LOG="$RUN_DIR/driver.log"

export SPARK_HOME="$SPARK_HOME_DIR"
export SPARK_SCALA_VERSION="${SCALA_BINARY_VERSION:-$(sed -n 's:^    <scala.binary.version>\(.*\)</scala.binary.version>.*:\1:p' "$ROOT/pom.xml" | head -n1)}"
export SPARK_LOCAL_IP=127.0.0.1
export SPARK_LOCAL_HOSTNAME=127.0.0.1
export SPARK_LOCAL_DIRS="$RUN_DIR/local"
unset SPARK_CONF_DIR SPARK_MASTER_HOST SPARK_MASTER_PORT SPARK_MASTER_WEBUI_PORT SPARK_MASTER_OPTS \
      SPARK_WORKER_CORES SPARK_WORKER_MEMORY SPARK_WORKER_PORT SPARK_WORKER_WEBUI_PORT \
      SPARK_WORKER_DIR SPARK_WORKER_OPTS SPARK_DAEMON_JAVA_OPTS SPARK_PUBLIC_DNS \
      HADOOP_CONF_DIR YARN_CONF_DIR 2>/dev/null || true
CP="$SPARK_HOME/jars/*"
DAEMON_JVM=(-Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 $SPARK_JVM_FLAGS)

# ---------------------------------------------------------------- cleanup, always
MASTER_PID="" WORKER_PIDS=() SUBMIT_PID="" FAIL_REASON="" STOPPED=0 STOP_NOTE=""

alive() {   # running and not a zombie
  local s
  s="$(ps -o stat= -p "$1" 2>/dev/null)" || return 1
  case "$s" in Z*|"") return 1 ;; esac
}
wait_gone() {   # wait_gone SECONDS PID...: 0 when all are gone in time
  local deadline=$(( $(date +%s) + $1 )); shift
  local p any
  while :; do
    any=0
    for p in "$@"; do alive "$p" && any=1; done
    [ "$any" = 0 ] && return 0
    [ "$(date +%s)" -ge "$deadline" ] && return 1
    sleep 0.2
  done
}
run_pids() {   # every live process of this run: our JVMs (marker) and executors (cwd in RUN_DIR)
  local f pid
  {
    # a regex whose text differs from the marker, so that this grep does not find itself
    grep -laE -- "vkspark[.]cluster-test[.]run=${RUN_ID//./[.]}" /proc/[0-9]*/cmdline 2>/dev/null || true
    find /proc -mindepth 2 -maxdepth 2 -name cwd -lname "$RUN_DIR/*" 2>/dev/null || true
  } | while IFS= read -r f; do
    pid="${f#/proc/}"; pid="${pid%%/*}"
    [ "$pid" != "$$" ] && [ "$pid" != "$BASHPID" ] && alive "$pid" && echo "$pid"
  done | sort -un
}
stop_all() {
  [ "$STOPPED" = 1 ] && return 0
  STOPPED=1
  local p left
  if [ -n "$SUBMIT_PID" ] && alive "$SUBMIT_PID"; then
    kill -TERM "$SUBMIT_PID" 2>/dev/null || true     # timeout passes it on to the driver
    wait_gone 10 "$SUBMIT_PID" || kill -KILL -- "-$SUBMIT_PID" 2>/dev/null || true
  fi
  if [ "${#WORKER_PIDS[@]}" -gt 0 ]; then
    for p in "${WORKER_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    wait_gone 15 "${WORKER_PIDS[@]}" || STOP_NOTE="workers needed SIGKILL"
  fi
  if [ -n "$MASTER_PID" ]; then
    kill -TERM "$MASTER_PID" 2>/dev/null || true
    wait_gone 10 "$MASTER_PID" || STOP_NOTE="${STOP_NOTE:+$STOP_NOTE, }master needed SIGKILL"
  fi
  # stragglers: executors the Workers did not take down, anything left with our marker
  left="$(run_pids | tr '\n' ' ')"
  if [ -n "${left// /}" ]; then
    # shellcheck disable=SC2086
    kill -TERM $left 2>/dev/null || true
    # shellcheck disable=SC2086
    wait_gone 5 $left || true
    left="$(run_pids | tr '\n' ' ')"
    if [ -n "${left// /}" ]; then
      STOP_NOTE="${STOP_NOTE:+$STOP_NOTE, }SIGKILL to leftover pids $left"
      # shellcheck disable=SC2086
      kill -KILL $left 2>/dev/null || true
    fi
  fi
  wait 2>/dev/null || true
  left="$(run_pids | tr '\n' ' ')"
  if [ -n "${left// /}" ]; then
    sleep 1; left="$(run_pids | tr '\n' ' ')"
    [ -z "${left// /}" ] || echo "[cluster-test] WARNING: processes still alive: $left" >&2
  fi
  [ -z "$STOP_NOTE" ] || echo "[cluster-test] note: $STOP_NOTE" >&2
}
tail_log() {   # tail_log FILE LINES
  [ -s "$1" ] || return 0
  echo "----- ${1#"$RUN_DIR"/} (last $2 lines) -----" >&2
  tail -n "$2" "$1" >&2
}
show_logs() {
  local f
  tail_log "$RUN_DIR/master.log" 40
  tail_log "$RUN_DIR/worker-1.log" 40
  tail_log "$RUN_DIR/worker-2.log" 40
  for f in "$WORK_DIR"/app-*/*/stderr; do [ -f "$f" ] && tail_log "$f" 40; done
  tail_log "$DRIVER_LOG" 80
  tail_log "$DRIVER_OUT" 30
  echo "----- all logs: $RUN_DIR -----" >&2
}
on_exit() {
  local rc=$?
  set +e
  trap - INT TERM HUP
  stop_all
  if [ "$rc" != 0 ]; then
    show_logs
    echo "[cluster-test] FAILED: ${FAIL_REASON:-exit status $rc}" >&2
  fi
  exit "$rc"
}
fail() { FAIL_REASON="$*"; exit 1; }
trap on_exit EXIT
trap 'FAIL_REASON="interrupted (SIGINT)"; exit 130' INT
trap 'FAIL_REASON="terminated (SIGTERM)"; exit 143' TERM
trap 'FAIL_REASON="hung up (SIGHUP)"; exit 129' HUP

# ---------------------------------------------------------------- ports (127.0.0.1 only)
pick_ports() {   # pick_ports N: N distinct free ports below the ephemeral range
  if command -v python3 >/dev/null; then
    python3 - "$1" <<'EOF'
import random, socket, sys
n, got = int(sys.argv[1]), []
while len(got) < n:
    p = random.randint(20000, 32000)
    if p in got: continue
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("127.0.0.1", p)); got.append(p)
    except OSError:
        pass
    finally:
        s.close()
print(" ".join(map(str, got)))
EOF
  else
    local got=() p
    while [ "${#got[@]}" -lt "$1" ]; do
      p=$(( 20000 + RANDOM % 12000 ))
      case " ${got[*]} " in *" $p "*) continue ;; esac
      (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && continue
      got+=("$p")
    done
    echo "${got[*]}"
  fi
}
master_json() { curl -fsS --max-time 2 "http://127.0.0.1:$MASTER_UI_PORT/json/" 2>/dev/null; }
alive_workers() {   # how many workers the master counts as ALIVE
  local j n
  if command -v curl >/dev/null; then
    j="$(master_json)" || { echo -1; return; }
    n="$(printf '%s' "$j" | tr -d ' \n' | grep -o '"aliveworkers":[0-9]*' | head -n1 | cut -d: -f2)"
    echo "${n:--1}"
  else
    grep -c 'Registering worker' "$RUN_DIR/master.log" 2>/dev/null || echo 0
  fi
}
master_up() {
  if command -v curl >/dev/null; then master_json >/dev/null
  else grep -q 'I have been elected leader' "$RUN_DIR/master.log" 2>/dev/null; fi
}

# ---------------------------------------------------------------- Master
start_master() {
  read -r MASTER_PORT MASTER_UI_PORT < <(pick_ports 2)
  # spark.port.maxRetries=0: fail rather than move silently to another port (we retry instead)
  ( cd "$RUN_DIR" && exec "$JAVA" "${DAEMON_JVM[@]}" "$MARK" -Dspark.master.rest.enabled=false \
      -Dspark.port.maxRetries=0 -cp "$CP" org.apache.spark.deploy.master.Master \
      --host 127.0.0.1 --port "$MASTER_PORT" --webui-port "$MASTER_UI_PORT" ) \
    >>"$RUN_DIR/master.log" 2>&1 </dev/null &
  MASTER_PID=$!
}
deadline=$(( $(date +%s) + START_TIMEOUT ))
attempt=0
while :; do
  attempt=$((attempt + 1))
  start_master
  while alive "$MASTER_PID" && ! master_up; do
    [ "$(date +%s)" -lt "$deadline" ] || fail "Master did not come up within ${START_TIMEOUT}s"
    sleep 0.3
  done
  alive "$MASTER_PID" && break
  wait "$MASTER_PID" 2>/dev/null || true
  # a port taken between picking and binding: try other ports, twice more
  [ "$attempt" -lt 3 ] || fail "Master exited at startup (3 attempts; see master.log)"
  echo "[cluster-test] Master exited at startup (port clash?), retrying" >&2
  MASTER_PID=""
done
MASTER_URL="spark://127.0.0.1:$MASTER_PORT"
T_MASTER=$(now_ms)

# ---------------------------------------------------------------- Workers
GPU_CONFS=()
if [ "$WORKER_GPUS" = 1 ]; then
  # Standalone Workers on one host must not share a GPU: each gets its own in a resources file
  # (Spark's format), as on a real cluster where every node has its own.
  mapfile -t GPUS < <(bash "$ROOT/scripts/vulkan-gpus.sh" | grep -o '"[0-9a-fA-F-]\{36\}"' | tr -d '"')
  [ "${#GPUS[@]}" -ge 2 ] || fail "--worker-gpus needs 2 GPUs; vulkan-gpus.sh found ${#GPUS[@]}"
  say "GPUs for the Workers: ${GPUS[0]} ${GPUS[1]}"
  GPU_CONFS=(--conf spark.executor.resource.gpu.amount=1 --conf spark.task.resource.gpu.amount=1)
fi
for i in 1 2; do
  WORKER_JVM=()
  if [ "$WORKER_GPUS" = 1 ]; then
    printf '[{"id": {"componentName": "spark.worker", "resourceName": "gpu"}, "addresses": ["%s"]}]\n' \
      "${GPUS[$((i - 1))]}" >"$RUN_DIR/worker-$i-resources.json"
    WORKER_JVM=(-Dspark.worker.resource.gpu.amount=1 "-Dspark.worker.resourcesFile=$RUN_DIR/worker-$i-resources.json")
  fi
  ( cd "$RUN_DIR" && exec "$JAVA" "${DAEMON_JVM[@]}" ${WORKER_JVM[@]+"${WORKER_JVM[@]}"} "$MARK" -cp "$CP" \
      org.apache.spark.deploy.worker.Worker "$MASTER_URL" --host 127.0.0.1 --port 0 \
      --webui-port 0 --cores 1 --memory 1g --work-dir "$WORK_DIR" ) \
    >"$RUN_DIR/worker-$i.log" 2>&1 </dev/null &
  WORKER_PIDS+=($!)
done
while :; do
  n="$(alive_workers)"
  [ "$n" -ge 2 ] 2>/dev/null && break
  alive "$MASTER_PID" || fail "Master died while Workers were registering"
  for i in 1 2; do alive "${WORKER_PIDS[$((i - 1))]}" || fail "Worker $i died at startup (see worker-$i.log)"; done
  [ "$(date +%s)" -lt "$deadline" ] || fail "Workers not registered within ${START_TIMEOUT}s (alive: $n)"
  sleep 0.5
done
T_WORKERS=$(now_ms)
say "cluster up: master $MASTER_URL (ui :$MASTER_UI_PORT), 2 workers, in $(secs "$T_HOME" "$T_WORKERS")s; logs in $RUN_DIR"

# ---------------------------------------------------------------- submit
# shellcheck disable=SC2206
SUBMIT=(timeout --kill-after=15 "$SUBMIT_TIMEOUT"
  "$JAVA" $SPARK_JVM_FLAGS "-Xmx$DRIVER_XMX" "$MARK" -cp "$CP" org.apache.spark.deploy.SparkSubmit
  --master "$MASTER_URL" --deploy-mode client --name "vkspark-cluster-test"
  --class "$MAIN_CLASS"
  --conf spark.cores.max=2 --conf spark.executor.cores=1 --conf spark.executor.memory=1g
  --conf spark.ui.enabled=false
  ${GPU_CONFS[@]+"${GPU_CONFS[@]}"} ${JARS_ARG[@]+"${JARS_ARG[@]}"} ${USER_CONFS[@]+"${USER_CONFS[@]}"}
  "$APP_JAR" ${APP_ARGS[@]+"${APP_ARGS[@]}"})
printf '%q ' "${SUBMIT[@]}" >"$RUN_DIR/submit.cmd"; echo >>"$RUN_DIR/submit.cmd"
"${SUBMIT[@]}" >"$DRIVER_OUT" 2>"$DRIVER_LOG" </dev/null &
SUBMIT_PID=$!
SUBMIT_RC=0
wait "$SUBMIT_PID" || SUBMIT_RC=$?
SUBMIT_PID=""
T_SUBMIT=$(now_ms)
if [ "$SUBMIT_RC" = 124 ] || [ "$SUBMIT_RC" = 137 ]; then
  fail "spark-submit timed out after ${SUBMIT_TIMEOUT}s (an executor that cannot start hangs the app: see worker logs)"
fi
[ "$SUBMIT_RC" = 0 ] || fail "spark-submit exited with $SUBMIT_RC"

APP_IDS=()
for d in "$WORK_DIR"/app-*; do [ -d "$d" ] && APP_IDS+=("$(basename "$d")"); done
APP_ID="${APP_IDS[0]:-}"

# ---------------------------------------------------------------- stop, then check the complete logs
# The app is over: the Master has told the Workers to kill its executors. Give the executors time to
# close their devices and exit (a real GPU's vkDestroyDevice takes longer than lavapipe's; the
# Worker logs "finished with state ... exitStatus N" once an executor process is gone), then stop.
exit_deadline=$(( $(date +%s) + 30 ))
while [ "$(cat "$RUN_DIR"/worker-*.log 2>/dev/null | grep -c 'finished with state')" -lt "$EXPECT_EXEC" ] \
    && [ "$(date +%s)" -lt "$exit_deadline" ]; do
  sleep 0.5
done
stop_all
T_STOP=$(now_ms)

[ "${#APP_IDS[@]}" = 1 ] || fail "expected 1 application dir in $WORK_DIR, found ${#APP_IDS[@]}"
EXEC_LOGS=()
for f in "$WORK_DIR"/app-*/*/stderr; do [ -f "$f" ] && EXEC_LOGS+=("$f"); done
EXEC_IDS="$(for f in ${EXEC_LOGS[@]+"${EXEC_LOGS[@]}"}; do basename "$(dirname "$f")"; done | sort -n | tr '\n' ' ')"
EXEC_IDS="${EXEC_IDS% }"
[ "${#EXEC_LOGS[@]}" = "$EXPECT_EXEC" ] \
  || fail "expected $EXPECT_EXEC executors, found ${#EXEC_LOGS[@]} executor logs (ids: ${EXEC_IDS:-none})"

if [ -n "$CHECK_CMD" ]; then
  CHECK_RC=0
  CLUSTER_WORK_DIR="$WORK_DIR" DRIVER_OUT="$DRIVER_OUT" DRIVER_LOG="$DRIVER_LOG" \
  CLUSTER_RUN_DIR="$RUN_DIR" CLUSTER_APP_ID="$APP_ID" \
    timeout --kill-after=5 "$CHECK_TIMEOUT" bash -c "$CHECK_CMD" </dev/null || CHECK_RC=$?
  [ "$CHECK_RC" = 0 ] || fail "check command failed (exit $CHECK_RC): $CHECK_CMD"
fi
T_END=$(now_ms)

say "OK $APP_ID: ${#EXEC_LOGS[@]} executors (ids $EXEC_IDS), total $(secs "$T0" "$T_END")s" \
  "[spark-home $(secs "$T0" "$T_HOME")s, master $(secs "$T_HOME" "$T_MASTER")s," \
  "workers $(secs "$T_MASTER" "$T_WORKERS")s, submit $(secs "$T_WORKERS" "$T_SUBMIT")s," \
  "stop $(secs "$T_SUBMIT" "$T_STOP")s, check $(secs "$T_STOP" "$T_END")s]${STOP_NOTE:+ (note: $STOP_NOTE)}"
