#!/usr/bin/env bash
# --check hook of `make cluster-test` (see scripts/cluster-test.sh): every executor opened its own
# Vulkan device, and the job's GPU results matched the CPU reference.
# With --gpus (the two-GPU run of `cluster-test.sh --worker-gpus`): the two executors opened two
# different devices, by the UUID Spark assigned them, and both devices ran dispatches.
set -euo pipefail
gpus=0; [ "${1:-}" = --gpus ] && gpus=1
ids=$(grep -ho 'vkspark executor [0-9]* uses Vulkan device' "$CLUSTER_WORK_DIR"/app-*/*/stderr | awk '{print $3}' | sort -u)
n=$(printf '%s\n' "$ids" | grep -c . || true)
echo "[cluster-check] executors that opened a Vulkan device: $(echo $ids) ($n)"
[ "$n" -ge 2 ] || { echo "[cluster-check] FAILED: expected 2 executors to open their own device" >&2; exit 1; }
grep -h 'vkspark executor .* uses Vulkan device' "$CLUSTER_WORK_DIR"/app-*/*/stderr | sed 's/^/[cluster-check]   /'
grep -q 'VkGpuEval' "$DRIVER_OUT" || { echo "[cluster-check] FAILED: the driver's plan shows no VkGpuEval node" >&2; exit 1; }
grep -q '^\[options\] checks passed' "$DRIVER_OUT" || { echo "[cluster-check] FAILED: the job's GPU-vs-CPU checks did not pass" >&2; exit 1; }
grep -E '^\[options\] check' "$DRIVER_OUT" | sed 's/^/[cluster-check]   /' || true
# Every executor ended without a JVM crash. The Worker ends executors with SIGTERM when the
# application finishes (exitStatus 143, Spark's normal way); a crash in the Vulkan driver at exit
# shows as 134 (SIGABRT; seen on NVIDIA when the JVM exited with the device open) and an hs_err
# report. The close lines themselves ("vkspark closed Vulkan device '...") are informational: the
# Worker stops copying an executor's stderr when it sends the SIGTERM, so a device that takes longer
# to close than lavapipe's (any real GPU) closes after its log is cut off.
closed=$(grep -l "vkspark closed Vulkan device '" "$CLUSTER_WORK_DIR"/app-*/*/stderr | grep -c . || true)
if grep -l 'A fatal error has been detected\|SIGSEGV' "$CLUSTER_WORK_DIR"/app-*/*/stderr >/dev/null 2>&1; then
  echo "[cluster-check] FAILED: an executor JVM crashed: $(grep -l 'A fatal error has been detected\|SIGSEGV' "$CLUSTER_WORK_DIR"/app-*/*/stderr)" >&2; exit 1
fi
ended=$(grep -ho 'finished with state [A-Z]* .*exitStatus [0-9]*' "$CLUSTER_RUN_DIR"/worker-*.log | grep -c . || true)
[ "$ended" -ge "$n" ] || { echo "[cluster-check] FAILED: the Workers logged the end of $ended of $n executors (no exit status to check)" >&2; exit 1; }
codes=$(grep -ho 'finished with state [A-Z]* .*exitStatus [0-9]*' "$CLUSTER_RUN_DIR"/worker-*.log | grep -o 'exitStatus [0-9]*' | awk '{print $2}' | sort -u | tr '\n' ' ')
echo "[cluster-check] executors whose log shows the device closed: $closed of $n; executor exit statuses: ${codes:-none logged}"
for c in $codes; do
  case "$c" in 0|143) ;; *) echo "[cluster-check] FAILED: an executor exited with status $c (0, or 143 when the Worker stops it, expected)" >&2; exit 1 ;; esac
done
if [ "$gpus" = 1 ]; then
  uuids=$(grep -ho 'uses Vulkan device .*uuid [0-9a-f-]*' "$CLUSTER_WORK_DIR"/app-*/*/stderr | grep -o 'uuid [0-9a-f-]*$' | sort -u)
  nu=$(printf '%s\n' "$uuids" | grep -c . || true)
  [ "$nu" -ge 2 ] || { echo "[cluster-check] FAILED: the executors opened $nu distinct device(s), expected 2" >&2; exit 1; }
  grep -h 'was requested' "$CLUSTER_WORK_DIR"/app-*/*/stderr | sed 's/^/[cluster-check]   /' || true
  # Each task's "rows on GPU" by the executor that ran it (OptionsJob's listener): every GPU worked.
  by=$(grep -o '^\[options\] rows on GPU by executor: .*' "$DRIVER_OUT" | tail -n1 | sed 's/.*executor: //')
  echo "[cluster-check]   rows on GPU by executor: ${by:-none reported}"
  busy=$(printf '%s\n' "$by" | tr ',' '\n' | awk -F= '$2 > 0' | grep -c . || true)
  [ "$busy" -ge 2 ] || { echo "[cluster-check] FAILED: $busy executor(s) ran rows on their GPU, expected 2" >&2; exit 1; }
  echo "[cluster-check] two executors, two GPUs ($(echo $uuids)), both busy"
fi
echo "[cluster-check] OK"
