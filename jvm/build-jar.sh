#!/usr/bin/env bash
# Builds hsbloom's jar with sbt; shared by ../dev.sh and the wheel build (../setup.py), so a jar is made
# one way only. It compiles against the Spark jars in $SPARK_JARS_DIR (pyspark's jars/ folder) and fetches
# the sbt launcher once through Maven (installing Maven with apt-get as root on Debian when missing).
#
#   SPARK_JARS_DIR=... jvm/build-jar.sh package     build ../hsbloom/jars/hsbloom.jar unless it is current
#   SPARK_JARS_DIR=... jvm/build-jar.sh is-current  exit 0 if the jar is built from these sources for that Spark
#                                                  (or for $SPARK_VERSION, when set)
#   SPARK_JARS_DIR=... jvm/build-jar.sh sbt ARGS    run sbt in jvm/ with the project's settings
set -euo pipefail

JVM="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$JVM")"
JAR="$ROOT/hsbloom/jars/hsbloom.jar"
SBT_VERSION="$(sed -n 's/^sbt.version=//p' "$JVM/project/build.properties")"
LAUNCHER="$JVM/.launcher/sbt-launch-$SBT_VERSION.jar"
PYTHON="${PYTHON:-python3}"

log() { printf '[build-jar] %s\n' "$*" >&2; }

spark_version() {
  if [ -n "${SPARK_VERSION:-}" ]; then echo "$SPARK_VERSION"; return 0; fi
  local core
  core="$(ls "${SPARK_JARS_DIR:?SPARK_JARS_DIR must name the jars folder of pyspark}"/spark-core_2.13-*.jar 2>/dev/null | head -1)"
  [ -n "$core" ] || { log "no spark-core jar in SPARK_JARS_DIR=$SPARK_JARS_DIR"; return 1; }
  basename "$core" | sed 's/^spark-core_2\.13-\(.*\)\.jar$/\1/'
}

jar_spark_version() {
  "$PYTHON" - "$JAR" <<'EOF'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as jar:
    for line in jar.read("hsbloom-build.properties").decode().splitlines():
        if line.startswith("spark.version="):
            print(line.partition("=")[2].strip())
EOF
}

is_current() {
  [ -f "$JAR" ] || return 1
  [ -z "$(find "$JVM/src/main" "$JVM/build.sbt" "$JVM/project" "$ROOT/hsbloom/version.py" \
            -path "$JVM/project/target" -prune -o -type f -newer "$JAR" -print | head -1)" ] || return 1
  # A jar built against another Spark is stale too.
  [ "$(jar_spark_version 2>/dev/null)" = "$(spark_version)" ]
}

fetch_sbt_launcher() {
  [ -f "$LAUNCHER" ] && return 0
  command -v java >/dev/null 2>&1 || { log "Java 17 is required to build the jar (java not found)"; return 1; }
  if ! command -v mvn >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      log "installing Maven (it fetches the sbt launcher) with apt-get"
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq maven >/dev/null
    else
      log "Maven (mvn) is needed once to fetch the sbt launcher; install it and re-run"; return 1
    fi
  fi
  log "fetching sbt-launch $SBT_VERSION from Maven Central"
  mkdir -p "$(dirname "$LAUNCHER")"
  mvn -q -B dependency:copy -Dartifact="org.scala-sbt:sbt-launch:$SBT_VERSION" -DoutputDirectory="$(dirname "$LAUNCHER")"
  [ -f "$LAUNCHER" ] || { log "sbt launcher did not arrive at $LAUNCHER"; return 1; }
}

run_sbt() {
  spark_version >/dev/null
  fetch_sbt_launcher
  (cd "$JVM" && java \
      -Xmx2g -Xss4m \
      -Dsbt.repository.config="$JVM/project/repositories" -Dsbt.override.build.repos=true \
      -Dsbt.ci=true -Dsbt.color=false -Dsbt.supershell=false -Dsbt.server.forcestart=false \
      -jar "$LAUNCHER" "$@" </dev/null)
}

cmd="${1:-}"; [ $# -gt 0 ] && shift
case "$cmd" in
  package)
    if is_current; then exit 0; fi
    log "building the hsbloom jar with sbt $SBT_VERSION against Spark $(spark_version)"
    run_sbt package
    [ -f "$JAR" ] || { log "sbt finished but $JAR is missing"; exit 1; } ;;
  is-current) is_current ;;
  sbt) run_sbt "$@" ;;
  *) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
