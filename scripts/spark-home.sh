#!/usr/bin/env bash
# Assembles a minimal SPARK_HOME for standalone clusters, with no Spark distribution:
#   scripts/spark-home.sh OUTDIR
# OUTDIR/jars/ gets one symlink per runtime dependency jar of
# org.apache.spark:spark-sql_$SCALA_BINARY_VERSION:$SPARK_VERSION (from the local Maven repository; rocksdbjni left
# out), resolved by Maven offline first, then online (Maven Central). Nothing else is needed:
# run Master/Worker/SparkSubmit with -cp "OUTDIR/jars/*" and SPARK_HOME=OUTDIR,
# SPARK_SCALA_VERSION=$SCALA_BINARY_VERSION in the environment.
# Idempotent: returns at once when OUTDIR is complete (stamp file + every link resolves).
# Environment: SPARK_VERSION (default: <spark.version> of the root pom.xml, else 4.2.0),
#   SCALA_BINARY_VERSION (default: <scala.binary.version> of the root pom.xml, else 2.13; for a Spark
#   line: eval "$(scripts/spark-line.sh spark3.5_2.12)" sets both),
#   MVN (default "mvn -B -ntp"), SPARK_HOME_COPY=1 to copy the jars instead of linking them.
set -euo pipefail

if [ $# -ne 1 ] || [ -z "$1" ]; then
  echo "usage: $0 OUTDIR" >&2
  exit 2
fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$1"
mkdir -p "$(dirname "$out")"
out="$(cd "$(dirname "$out")" && pwd)/$(basename "$out")"

if [ -z "${SPARK_VERSION:-}" ]; then
  SPARK_VERSION="$(sed -n 's:.*<spark.version>\(.*\)</spark.version>.*:\1:p' "$root/pom.xml" 2>/dev/null | head -n1)"
  SPARK_VERSION="${SPARK_VERSION:-4.2.0}"
fi
if [ -z "${SCALA_BINARY_VERSION:-}" ]; then
  SCALA_BINARY_VERSION="$(sed -n 's:^    <scala.binary.version>\(.*\)</scala.binary.version>.*:\1:p' "$root/pom.xml" 2>/dev/null | head -n1)"
fi
SCALA_BIN="${SCALA_BINARY_VERSION:-2.13}"
MVN="${MVN:-mvn -B -ntp}"
copy="${SPARK_HOME_COPY:-0}"
stamp_text="spark-sql_${SCALA_BIN}:${SPARK_VERSION} copy=${copy}"

# Fast path: complete already?
is_complete() {   # the stamp matches and every jar it lists is there (links resolve)
  local d="$1" n=0 f
  [ -f "$d/.vkspark-spark-home" ] || return 1
  [ "$(head -n1 "$d/.vkspark-spark-home")" = "$stamp_text" ] || return 1
  while IFS= read -r f; do
    [ -e "$d/jars/$f" ] || return 1      # missing, or a dangling link (local repository cleaned)
    n=$((n + 1))
  done < <(tail -n +2 "$d/.vkspark-spark-home")
  for f in "$d"/jars/*; do [ -e "$f" ] || return 1; done
  [ "$n" -gt 50 ] && [ -e "$d/jars/spark-core_${SCALA_BIN}-${SPARK_VERSION}.jar" ]
}
if is_complete "$out"; then
  exit 0
fi

tmp="$(mktemp -d "${TMPDIR:-/tmp}/vkspark-spark-home.XXXXXX")"
stage="$out.tmp.$$"
cleanup() { rm -rf "$tmp" "$stage"; }
trap cleanup EXIT

cat > "$tmp/pom.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>io.vkspark.tmp</groupId>
  <artifactId>spark-home</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.spark</groupId>
      <artifactId>spark-sql_${SCALA_BIN}</artifactId>
      <version>${SPARK_VERSION}</version>
      <exclusions>
        <exclusion><groupId>org.rocksdb</groupId><artifactId>rocksdbjni</artifactId></exclusion>
      </exclusions>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-dependency-plugin</artifactId>
        <version>3.8.1</version>
      </plugin>
    </plugins>
  </build>
</project>
EOF

cp_file="$tmp/classpath.txt"
resolve() {
  # shellcheck disable=SC2086
  (cd "$tmp" && $MVN -q "$@" dependency:build-classpath \
      -Dmdep.outputFile="$cp_file" -Dmdep.includeScope=runtime -Dmdep.pathSeparator=: ) \
    >"$tmp/mvn.log" 2>&1
}
if ! resolve -o; then
  echo "[spark-home] resolving spark-sql_${SCALA_BIN}:${SPARK_VERSION} dependencies online" >&2
  if ! resolve; then
    cat "$tmp/mvn.log" >&2
    echo "[spark-home] FAILED: Maven could not resolve spark-sql_${SCALA_BIN}:${SPARK_VERSION}" >&2
    exit 1
  fi
fi

rm -rf "$stage"
mkdir -p "$stage/jars"
while IFS= read -r jar || [ -n "$jar" ]; do
  [ -n "$jar" ] || continue
  case "$jar" in *.jar) ;; *) continue ;; esac
  case "$(basename "$jar")" in rocksdbjni-*) continue ;; esac
  [ -f "$jar" ] || { echo "[spark-home] FAILED: missing $jar" >&2; exit 1; }
  if [ "$copy" = 1 ]; then cp "$jar" "$stage/jars/"; else ln -s "$jar" "$stage/jars/$(basename "$jar")"; fi
done < <(tr ':' '\n' < "$cp_file")
{ printf '%s\n' "$stamp_text"; ls -1 "$stage/jars"; } > "$stage/.vkspark-spark-home"
n=$(ls "$stage/jars" | wc -l)
if ! is_complete "$stage"; then
  echo "[spark-home] FAILED: incomplete jar set ($n jars) in $stage" >&2
  exit 1
fi

# Swap in atomically enough: a concurrent run that finished first wins, ours is dropped.
if is_complete "$out"; then
  exit 0
fi
rm -rf "$out"
mv -T "$stage" "$out" 2>/dev/null || is_complete "$out"
echo "[spark-home] $out: $n jars (spark-sql_${SCALA_BIN}:${SPARK_VERSION})" >&2
