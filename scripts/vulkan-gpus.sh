#!/usr/bin/env bash
# Spark GPU discovery script for vkspark: prints {"name": "gpu", "addresses": [<Vulkan device UUIDs>]}
# for the GPUs of this host, whatever their vendor (CPU devices such as lavapipe are left out, and so
# are devices without Vulkan 1.2 or a compute queue, as vkspark itself skips them).
#   --conf spark.executor.resource.gpu.amount=1
#   --conf spark.executor.resource.gpu.discoveryScript=/path/to/vulkan-gpus.sh
#
# It runs at every executor launch, so it needs neither a JVM nor SPARK_HOME. It asks, in order:
#   python  the Vulkan loader (libvulkan.so.1) itself, through python3's ctypes: the exact UUIDs
#           vkspark matches (VkPhysicalDeviceIDProperties.deviceUUID);
#   vulkaninfo  `vulkaninfo --summary` (Debian/Ubuntu package vulkan-tools);
#   java    vkspark's own io.vkspark.gpu.tools.Devices (needs java and the plugin jar: next to this
#           script, or named by VKSPARK_JAR; SLF4J from $SPARK_HOME/jars when set).
# The first that answers wins. Options:
#   --all          list CPU devices too (for tests and troubleshooting)
#   --method M     use only M (python, vulkaninfo or java)
# Exit status 0 with an empty list when the host has no GPU; 1 when no method could ask Vulkan.
set -euo pipefail
all=0
only=
while [ $# -gt 0 ]; do
  case "$1" in
    --all) all=1; shift ;;
    --method) only=${2:?--method needs python, vulkaninfo or java}; shift 2 ;;
    --spark-resources) shift ;;  # the default output; accepted for symmetry with Devices
    *) echo "vulkan-gpus.sh: unknown argument '$1' (see the header of $0)" >&2; exit 2 ;;
  esac
done
here=$(cd "$(dirname "$0")" && pwd)

json() {   # UUIDs on stdin, one per line -> Spark's resource JSON
  local first=1 u
  printf '{"name": "gpu", "addresses": ['
  while IFS= read -r u; do
    [ -n "$u" ] || continue
    [ "$first" = 1 ] || printf ', '
    printf '"%s"' "$u"
    first=0
  done
  printf ']}\n'
}

by_python() {
  command -v python3 >/dev/null 2>&1 || return 1
  VKSPARK_ALL=$all python3 - <<'PY'
import ctypes, os, sys
try:
    vk = ctypes.CDLL("libvulkan.so.1")
except OSError:
    sys.exit(1)
P = ctypes.c_void_p
class AppInfo(ctypes.Structure):
    _fields_ = [("sType", ctypes.c_int), ("pNext", P), ("pApplicationName", ctypes.c_char_p),
                ("applicationVersion", ctypes.c_uint32), ("pEngineName", ctypes.c_char_p),
                ("engineVersion", ctypes.c_uint32), ("apiVersion", ctypes.c_uint32)]
class InstanceInfo(ctypes.Structure):
    _fields_ = [("sType", ctypes.c_int), ("pNext", P), ("flags", ctypes.c_uint32),
                ("pApplicationInfo", ctypes.POINTER(AppInfo)), ("enabledLayerCount", ctypes.c_uint32),
                ("ppEnabledLayerNames", P), ("enabledExtensionCount", ctypes.c_uint32),
                ("ppEnabledExtensionNames", P)]
class IdProps(ctypes.Structure):   # VkPhysicalDeviceIDProperties
    _fields_ = [("sType", ctypes.c_int), ("pNext", P), ("deviceUUID", ctypes.c_ubyte * 16),
                ("driverUUID", ctypes.c_ubyte * 16), ("deviceLUID", ctypes.c_ubyte * 8),
                ("deviceNodeMask", ctypes.c_uint32), ("deviceLUIDValid", ctypes.c_uint32)]
class Props2(ctypes.Structure):    # VkPhysicalDeviceProperties2; properties read by offset below
    _fields_ = [("sType", ctypes.c_int), ("pNext", P), ("properties", ctypes.c_ubyte * 1024)]
class QueueFamily(ctypes.Structure):
    _fields_ = [("queueFlags", ctypes.c_uint32), ("queueCount", ctypes.c_uint32),
                ("timestampValidBits", ctypes.c_uint32), ("granularity", ctypes.c_uint32 * 3)]
V12 = (1 << 22) | (2 << 12)
app = AppInfo(0, None, b"vulkan-gpus.sh", 0, b"vkspark", 0, V12)
info = InstanceInfo(1, None, 0, ctypes.pointer(app), 0, None, 0, None)
inst = P()
if vk.vkCreateInstance(ctypes.byref(info), None, ctypes.byref(inst)) != 0:
    sys.exit(1)
try:
    n = ctypes.c_uint32(0)
    vk.vkEnumeratePhysicalDevices(inst, ctypes.byref(n), None)
    devs = (P * n.value)()
    if n.value and vk.vkEnumeratePhysicalDevices(inst, ctypes.byref(n), devs) not in (0, 5):  # VK_INCOMPLETE
        sys.exit(1)
    for pd in devs[: n.value]:
        ids = IdProps(1000071004, None)
        props = Props2(1000059001, ctypes.cast(ctypes.pointer(ids), P))
        vk.vkGetPhysicalDeviceProperties2(P(pd), ctypes.byref(props))
        raw = bytes(props.properties)
        api = int.from_bytes(raw[0:4], "little")
        kind = int.from_bytes(raw[16:20], "little")   # VkPhysicalDeviceType: 4 = CPU
        if (api >> 22) & 0x7F == 1 and (api >> 12) & 0x3FF < 2:
            continue
        q = ctypes.c_uint32(0)
        vk.vkGetPhysicalDeviceQueueFamilyProperties(P(pd), ctypes.byref(q), None)
        fams = (QueueFamily * q.value)()
        vk.vkGetPhysicalDeviceQueueFamilyProperties(P(pd), ctypes.byref(q), fams)
        if not any(f.queueFlags & 0x2 for f in fams):   # VK_QUEUE_COMPUTE_BIT
            continue
        if kind == 4 and os.environ.get("VKSPARK_ALL") != "1":
            continue
        h = bytes(ids.deviceUUID).hex()
        print("-".join((h[0:8], h[8:12], h[12:16], h[16:20], h[20:32])))
finally:
    vk.vkDestroyInstance(inst, None)
PY
}

by_vulkaninfo() {
  command -v vulkaninfo >/dev/null 2>&1 || return 1
  local out
  out=$(vulkaninfo --summary 2>/dev/null) || return 1
  # Each device block has "deviceType = PHYSICAL_DEVICE_TYPE_..." and "deviceUUID = <uuid>".
  printf '%s\n' "$out" | awk -v all="$all" '
    /deviceType *=/ { t = $NF }
    /deviceUUID *=/ { if (all == "1" || t != "PHYSICAL_DEVICE_TYPE_CPU") print $NF }'
}

by_java() {
  local jar cp
  jar=${VKSPARK_JAR:-$(ls "$here"/vkspark-*.jar "$here"/../spark-plugin/target/vkspark-*.jar ./vkspark-*.jar 2>/dev/null | head -1 || true)}
  [ -n "$jar" ] || return 1
  command -v "${JAVA_HOME:+$JAVA_HOME/bin/}java" >/dev/null 2>&1 || return 1
  cp=$jar${SPARK_HOME:+:$SPARK_HOME/jars/*}
  local args=(--spark-resources)
  [ "$all" = 1 ] && args+=(--all)
  "${JAVA_HOME:+$JAVA_HOME/bin/}java" -cp "$cp" io.vkspark.gpu.tools.Devices "${args[@]}" \
    | tr -d '[]{}"' | sed 's/.*addresses: *//' | tr ',' '\n' | tr -d ' '
}

for m in ${only:-python vulkaninfo java}; do
  if uuids=$("by_$m" 2>/dev/null); then
    printf '%s\n' "$uuids" | json
    exit 0
  fi
done
echo "vulkan-gpus.sh: could not ask Vulkan for its devices (tried: ${only:-python3 + libvulkan.so.1, vulkaninfo, java + VKSPARK_JAR}). Fix: install the Vulkan loader (libvulkan1) and python3, or vulkan-tools, or set VKSPARK_JAR to the vkspark plugin jar." >&2
exit 1
