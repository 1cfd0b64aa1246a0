#!/usr/bin/env bash
# Builds hsbloom's jar with sbt; shared by ../dev.sh and the wheel build (../setup.py), so a jar is made
# one way only. It compiles against the Spark jars in $SPARK_JARS_DIR (pyspark's jars/ folder), needs Java 17
# and fetches the sbt launcher once through Maven (installing Maven with apt-get as root on Debian when missing).
# The jar records a fingerprint of the sources it was built from, so a jar is reused only when it provably
# matches them (file times prove nothing after a clone, a copy or an unpacked sdist).
#
#   SPARK_JARS_DIR=... jvm/build-jar.sh package     build ../hsbloom/jars/hsbloom.jar unless it is current
#   SPARK_JARS_DIR=... jvm/build-jar.sh is-current  exit 0 if the jar is built from these sources for that Spark
#                                                  (or for $SPARK_VERSION, when set)
#   SPARK_JARS_DIR=... jvm/build-jar.sh sbt ARGS    run sbt in jvm/ with the project's settings
#   jvm/build-jar.sh fingerprint                    print the sources' fingerprint (the jar's sources.sha256)
set -euo pipefail

JVM="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$JVM")"
JAR="$ROOT/hsbloom/jars/hsbloom.jar"
SBT_VERSION="$(sed -n 's/^sbt.version=//p' "$JVM/project/build.properties")"
LAUNCHER="$JVM/.launcher/sbt-launch-$SBT_VERSION.jar"
PYTHON="${PYTHON:-python3}"

log() { printf '[build-jar] %s\n' "$*" >&2; }

# The Spark release in $SPARK_JARS_DIR, read off its spark-core jar.
jars_spark_version() {
  local core
  core="$(ls "${SPARK_JARS_DIR:?SPARK_JARS_DIR must name the jars folder of pyspark}"/spark-core_2.13-*.jar 2>/dev/null | head -1)"
  [ -n "$core" ] || { log "error: no spark-core_2.13 jar in SPARK_JARS_DIR=$SPARK_JARS_DIR: point it at pyspark's jars/ folder"; return 1; }
  basename "$core" | sed 's/^spark-core_2\.13-\(.*\)\.jar$/\1/'
}

# The Spark release the jar must be built for: $SPARK_VERSION (the wheel build's pin), else $SPARK_JARS_DIR's.
spark_version() {
  if [ -n "${SPARK_VERSION:-}" ]; then echo "$SPARK_VERSION"; else jars_spark_version; fi
}

# What the jar is built from: the files under src/main and directly in project/, build.sbt and the version,
# by content and path (equal in a clone, an sdist or a git checkout, whatever their times).
fingerprint() {
  "$PYTHON" - "$ROOT" <<'PY'
import hashlib, sys
from pathlib import Path
root = Path(sys.argv[1])
jvm = root / "jvm"
files = [p for p in (jvm / "src" / "main").rglob("*") if p.is_file()]
files += [p for p in (jvm / "project").iterdir() if p.is_file()]
files += [jvm / "build.sbt", root / "hsbloom" / "version.py"]
digest = hashlib.sha256()
for name in sorted(p.relative_to(root).as_posix() for p in files):
    digest.update(f"{hashlib.sha256((root / name).read_bytes()).hexdigest()}  {name}\n".encode())
print(digest.hexdigest())
PY
}

# One property of the jar's hsbloom-build.properties (empty when the jar or the property is missing).
jar_property() {
  "$PYTHON" - "$JAR" "$1" 2>/dev/null <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as jar:
    for line in jar.read("hsbloom-build.properties").decode().splitlines():
        if line.startswith(sys.argv[2] + "="):
            print(line.partition("=")[2].strip())
PY
}

is_current() {
  [ -f "$JAR" ] || return 1
  [ "$(jar_property sources.sha256)" = "$(fingerprint)" ] || return 1
  # A jar built against another Spark is stale too.
  [ "$(jar_property spark.version)" = "$(spark_version)" ]
}

# sbt runs on Java 17 (a newer JDK works too: the build targets 17 with -release).
require_java() {
  local fix="install a Java 17 JDK (Debian/Ubuntu: apt-get install openjdk-17-jdk-headless) and put its java on PATH"
  if ! command -v java >/dev/null 2>&1; then
    log "error: building hsbloom's jar needs Java 17, and java is not on PATH: $fix"; return 1
  fi
  local version major
  version="$(java -version 2>&1 | sed -n 's/.*version "\([^"]*\)".*/\1/p' | head -1)"
  major="${version%%.*}"
  [ "$major" = 1 ] && major="$(echo "$version" | cut -d. -f2)"  # 1.8.0_x is Java 8
  if ! [ "${major:-0}" -ge 17 ] 2>/dev/null; then
    log "error: building hsbloom's jar needs Java 17, and $(command -v java) is Java ${version:-of unknown version}: $fix"
    return 1
  fi
}

fetch_sbt_launcher() {
  [ -f "$LAUNCHER" ] && return 0
  # Maven fetched it before (another checkout, or pip's build of a clone): copy it as mvn would, without its start-up.
  local fetched="${HOME:-/nonexistent}/.m2/repository/org/scala-sbt/sbt-launch/$SBT_VERSION/sbt-launch-$SBT_VERSION.jar"
  if [ -f "$fetched" ]; then
    mkdir -p "$(dirname "$LAUNCHER")" && cp "$fetched" "$LAUNCHER" && return 0
  fi
  if ! command -v mvn >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      log "installing Maven (it fetches the sbt launcher) with apt-get"
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq maven >/dev/null
    else
      log "error: Maven (mvn) is needed once to fetch the sbt launcher: install it (Debian/Ubuntu: apt-get install maven) and re-run"
      return 1
    fi
  fi
  log "fetching sbt-launch $SBT_VERSION through Maven"
  mkdir -p "$(dirname "$LAUNCHER")"
  mvn -q -B dependency:copy -Dartifact="org.scala-sbt:sbt-launch:$SBT_VERSION" -DoutputDirectory="$(dirname "$LAUNCHER")"
  [ -f "$LAUNCHER" ] || { log "error: the sbt launcher did not arrive at $LAUNCHER (see Maven's output above)"; return 1; }
}

run_sbt() {
  jars_spark_version >/dev/null
  require_java
  fetch_sbt_launcher
  local sources; sources="$(fingerprint)"
  # build.sbt stamps the jar with the fingerprint (sources.sha256 in hsbloom-build.properties).
  # sbt runs one command and exits, too briefly to repay the JIT's server compiler: the client compiler only
  # (docs/design/decisions.md, "The test run"). Forked test JVMs keep the default.
  (cd "$JVM" && HSBLOOM_SOURCES_SHA256="$sources" java \
      -Xmx2g -Xss4m -XX:TieredStopAtLevel=1 \
      -Dsbt.repository.config="$JVM/project/repositories" -Dsbt.override.build.repos=true \
      -Dsbt.ci=true -Dsbt.color=false -Dsbt.supershell=false -Dsbt.server.forcestart=false \
      -jar "$LAUNCHER" "$@" </dev/null)
}

cmd="${1:-}"; [ $# -gt 0 ] && shift
case "$cmd" in
  package)
    if is_current; then exit 0; fi
    against="$(jars_spark_version)"
    if [ "$against" != "$(spark_version)" ]; then
      log "error: SPARK_JARS_DIR=$SPARK_JARS_DIR holds Spark $against, but the jar must be built for Spark" \
          "$(spark_version): point it at the jars/ folder of pyspark==$(spark_version)"
      exit 1
    fi
    log "building the hsbloom jar with sbt $SBT_VERSION against Spark $against ($SPARK_JARS_DIR)"
    run_sbt package
    is_current || { log "error: sbt finished, but $JAR is missing or not stamped with these sources"; exit 1; } ;;
  is-current) is_current ;;
  fingerprint) fingerprint ;;
  sbt) run_sbt "$@" ;;
  *) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
