#!/usr/bin/env bash
# Makes sure this machine can run Vulkan compute: the loader (libvulkan1), a driver (Mesa's
# lavapipe runs on any CPU: mesa-vulkan-drivers) and, for the tests, the Khronos validation layer.
# Installs what is missing with apt-get when run as root on Debian/Ubuntu; otherwise prints the
# exact command and fails.
#   scripts/ensure-vulkan.sh            loader + driver + validation layer (tests)
#   scripts/ensure-vulkan.sh --runtime  loader + driver only (demo, benchmarks)
set -euo pipefail
need_layer=1
[ "${1:-}" = "--runtime" ] && need_layer=0

missing=()
if ! ldconfig -p 2>/dev/null | grep -q 'libvulkan\.so\.1 '; then
  missing+=(libvulkan1)
fi
has_icd=0
if [ -n "${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-}" ]; then
  has_icd=1
else
  for d in /usr/share/vulkan/icd.d /etc/vulkan/icd.d /usr/local/share/vulkan/icd.d; do
    if compgen -G "$d/*.json" >/dev/null; then has_icd=1; fi
  done
fi
# lavapipe is the driver every test machine can use; make sure it is there even next to a GPU driver.
if [ "$has_icd" = 0 ] || ! compgen -G "/usr/share/vulkan/icd.d/lvp_icd*.json" >/dev/null; then
  if [ -z "${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-}" ]; then missing+=(mesa-vulkan-drivers); fi
fi
if [ "$need_layer" = 1 ] && ! compgen -G "/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json" >/dev/null; then
  missing+=(vulkan-validationlayers)
fi

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
cmd="apt-get update && apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "[vkspark] installing the Vulkan runtime: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  ldconfig
  echo "[vkspark] installed: ${missing[*]}" >&2
else
  echo "[vkspark] missing Vulkan packages: ${missing[*]}" >&2
  echo "[vkspark] install them with:  sudo sh -c '$cmd'" >&2
  exit 1
fi
