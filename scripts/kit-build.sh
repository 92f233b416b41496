#!/usr/bin/env bash
# Builds what scripts/kit-suite.sh runs on a GPU machine that has no Maven, and packs it with
# shared/tools/gpu-kit.sh (docs/RELIABILITY.md, "How to run it all on a GPU machine"):
#   - the modules' jars, their test classes as gpu-core-tests.jar, spark-plugin-tests.jar and
#     examples-tests.jar, every test-scope dependency and junit-platform-console-standalone, in one folder;
#   - the per-module class path lists (kit-suite.sh --lists) under target/kit/cp.
#
#   scripts/kit-build.sh [KIT_DIR]     (default .gpu; gpu-kit.sh git-ignores it)
#
# gpu-kit.sh prints the remote-runner commands to stage each part; then, there:
#   bash /opt/vkkit/run.sh bash scripts/kit-suite.sh /opt/vkkit/jars target/kit/cp "$OUT/suite" [STEP...]
# (the runner carries target/kit/cp and KIT_DIR's parts as ignored paths).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
kit="${1:-.gpu}"
kit_tool="${GPU_KIT:-$root/../shared/tools/gpu-kit.sh}"
[ -f "$kit_tool" ] || { echo "kit-build: no gpu-kit.sh at $kit_tool (set GPU_KIT)" >&2; exit 1; }
version=0.1.0-SNAPSHOT
jars="$root/target/kit/jars"
rm -rf "$root/target/kit" && mkdir -p "$jars"

mvn -B -q -o -DskipTests package
for m in gpu-core spark-plugin examples; do
  jar cf "$jars/$m-tests.jar" -C "$m/target/test-classes" .
  mvn -B -q -o -pl "$m" dependency:copy-dependencies -DincludeScope=test -DoutputDirectory="$jars" \
    -DexcludeGroupIds=io.vkspark >/dev/null
done
cp gpu-core/target/vkspark-gpu-core-$version.jar spark-plugin/target/vkspark-spark-plugin-$version.jar \
  examples/target/vkspark-examples-$version.jar "$jars/"
launcher=$(ls ~/.m2/repository/org/junit/platform/junit-platform-launcher/ | sort -V | tail -n 1)
mvn -B -q dependency:copy -Dartifact="org.junit.platform:junit-platform-console-standalone:$launcher" \
  -DoutputDirectory="$jars" >/dev/null
rm -f "$jars"/*natives-linux-arm64*.jar "$jars"/rocksdbjni-*.jar
bash scripts/kit-suite.sh --lists "$root/target/kit/cp"

GPU_KIT_DEBS="${GPU_KIT_DEBS:-libvulkan1 libglvnd0 libglx0 libegl1 libgl1 libopengl0 libgles2 vulkan-validationlayers}" \
  bash "$kit_tool" --spark --out "$kit" "$jars"
