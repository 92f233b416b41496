#!/usr/bin/env bash
# Prints the Spark version and Scala binary version of a Spark line (a Maven profile of the root
# pom.xml), as shell assignments:
#   scripts/spark-line.sh spark3.5_2.12   ->  SPARK_VERSION=3.5.9 SCALA_BINARY_VERSION=2.12
# With no argument, or the default line (spark4.2_2.13), the root pom's own <properties>.
# Used by the Makefile (eval "$(scripts/spark-line.sh LINE)") so that the versions live in pom.xml only.
set -euo pipefail
pom="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/pom.xml"
line="${1:-}"
prop() {   # prop NAME [PROFILE]: the property in the profile, else in the top-level <properties>
  local v=""
  if [ -n "${2:-}" ]; then
    v="$(awk -v id="<id>$2</id>" -v n="$1" '
      index($0, id) { inp = 1 }
      inp && index($0, "</profile>") { exit }
      inp && index($0, "<" n ">") { sub(".*<" n ">", ""); sub("</" n ">.*", ""); print; exit }' "$pom")"
  fi
  [ -n "$v" ] || v="$(sed -n "s:^    <$1>\(.*\)</$1>.*:\1:p" "$pom" | head -n1)"
  printf '%s' "$v"
}
if [ -n "$line" ] && ! grep -q "<id>$line</id>" "$pom"; then
  echo "spark-line.sh: no profile '$line' in $pom (the lines: $(sed -n 's:.*<id>\(spark[^<]*\)</id>.*:\1:p' "$pom" | tr '\n' ' '))" >&2
  exit 2
fi
echo "SPARK_VERSION=$(prop spark.version "$line") SCALA_BINARY_VERSION=$(prop scala.binary.version "$line")"
