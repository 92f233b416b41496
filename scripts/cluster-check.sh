#!/usr/bin/env bash
# --check hook of `make cluster-test` (see scripts/cluster-test.sh): every executor opened its own
# Vulkan device, and the job's GPU results matched the CPU reference.
set -euo pipefail
ids=$(grep -ho 'vkspark executor [0-9]* uses Vulkan device' "$CLUSTER_WORK_DIR"/app-*/*/stderr | awk '{print $3}' | sort -u)
n=$(printf '%s\n' "$ids" | grep -c . || true)
echo "[cluster-check] executors that opened a Vulkan device: $(echo $ids) ($n)"
[ "$n" -ge 2 ] || { echo "[cluster-check] FAILED: expected 2 executors to open their own device" >&2; exit 1; }
grep -h 'vkspark executor .* uses Vulkan device' "$CLUSTER_WORK_DIR"/app-*/*/stderr | sed 's/^/[cluster-check]   /'
grep -q 'VkGpuEval' "$DRIVER_OUT" || { echo "[cluster-check] FAILED: the driver's plan shows no VkGpuEval node" >&2; exit 1; }
grep -q '^\[options\] checks passed' "$DRIVER_OUT" || { echo "[cluster-check] FAILED: the job's GPU-vs-CPU checks did not pass" >&2; exit 1; }
grep -E '^\[options\] check' "$DRIVER_OUT" | sed 's/^/[cluster-check]   /' || true
echo "[cluster-check] OK"
