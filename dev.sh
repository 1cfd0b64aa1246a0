#!/usr/bin/env bash
# hsbloom's one set-up and task runner. From a fresh clone with only Python 3.11
# and Java 17 present it creates the virtual environment, installs the package
# with its extras, fetches the sbt launcher through Maven and builds the jar;
# each step is skipped when what it makes is already up to date.
#
#   ./dev.sh example        set up, then run examples/quickstart.py
#   ./dev.sh test [ARGS]    set up, then run the Scala tests (sbt test) and pytest ARGS
#   ./dev.sh build          set up only (venv + jar)
#   ./dev.sh bench NAME     set up, then run bench/NAME.py
#   ./dev.sh sbt ARGS       run sbt in jvm/ with the project's settings
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="$ROOT/.venv"
PY="$VENV/bin/python"
STAMPS="$ROOT/.stamps"
JAR="$ROOT/hsbloom/jars/hsbloom.jar"
SBT_VERSION="$(sed -n 's/^sbt.version=//p' "$ROOT/jvm/project/build.properties")"
LAUNCHER_DIR="$ROOT/jvm/.launcher"
LAUNCHER="$LAUNCHER_DIR/sbt-launch-$SBT_VERSION.jar"

log() { printf '[dev.sh] %s\n' "$*" >&2; }

find_python() {
  for candidate in "${PYTHON:-}" python3.11 python3; do
    [ -n "$candidate" ] || continue
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(0 if sys.version_info[:2] >= (3, 11) else 1)'; then
      echo "$candidate"; return 0
    fi
  done
  log "Python 3.11 or newer is required (set PYTHON=/path/to/python3.11)"; return 1
}

setup_python() {
  mkdir -p "$STAMPS"
  if [ ! -x "$PY" ]; then
    log "creating the virtual environment in .venv"
    "$(find_python)" -m venv "$VENV"
  fi
  local want; want="$(cat "$ROOT/pyproject.toml" | sha256sum | cut -d' ' -f1)"
  if [ "$(cat "$STAMPS/pip" 2>/dev/null)" != "$want" ]; then
    log "installing hsbloom and its dependencies into .venv"
    "$PY" -m pip install --quiet --upgrade pip
    "$PY" -m pip install --quiet -e "$ROOT[delta,dev]"
    echo "$want" > "$STAMPS/pip"
  fi
}

spark_jars_dir() {
  "$PY" -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))'
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
  mkdir -p "$LAUNCHER_DIR"
  mvn -q -B dependency:copy -Dartifact="org.scala-sbt:sbt-launch:$SBT_VERSION" -DoutputDirectory="$LAUNCHER_DIR"
  [ -f "$LAUNCHER" ] || { log "sbt launcher did not arrive at $LAUNCHER"; return 1; }
}

run_sbt() {
  fetch_sbt_launcher
  (cd "$ROOT/jvm" && SPARK_JARS_DIR="$(spark_jars_dir)" java \
      -Xmx2g -Xss4m \
      -Dsbt.repository.config="$ROOT/jvm/project/repositories" -Dsbt.override.build.repos=true \
      -Dsbt.ci=true -Dsbt.color=false -Dsbt.supershell=false -Dsbt.server.forcestart=false \
      -jar "$LAUNCHER" "$@" </dev/null)
}

jar_is_current() {
  [ -f "$JAR" ] || return 1
  [ -z "$(find "$ROOT/jvm/src/main" "$ROOT/jvm/build.sbt" "$ROOT/jvm/project" "$ROOT/hsbloom/version.py" \
            -path "$ROOT/jvm/project/target" -prune -o -type f -newer "$JAR" -print | head -1)" ] || return 1
  # A jar built against another pyspark is stale too.
  "$PY" -c 'import sys, hsbloom.session as s; sys.exit(0 if s.jar_build_info(s.default_jar_path())["spark.version"] == s.running_spark_version() else 1)'
}

build_jar() {
  if jar_is_current; then return 0; fi
  log "building the hsbloom jar with sbt $SBT_VERSION"
  run_sbt package
}

setup() { setup_python; build_jar; }

cmd="${1:-}"; [ $# -gt 0 ] && shift
case "$cmd" in
  build) setup ;;
  example) setup; exec "$PY" "$ROOT/examples/quickstart.py" "$@" ;;
  test)
    setup
    log "running the Scala tests"
    run_sbt test
    log "running pytest"
    cd "$ROOT" && exec "$PY" -m pytest "$@" ;;
  bench)
    setup
    name="${1:?usage: ./dev.sh bench NAME}"; shift
    exec "$PY" "$ROOT/bench/$name.py" "$@" ;;
  sbt) setup_python; run_sbt "$@" ;;
  *) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
