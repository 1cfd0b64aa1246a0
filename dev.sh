#!/usr/bin/env bash
# hsbloom's one set-up and task runner. From a fresh clone with only Python 3.11
# and Java 17 present it creates the virtual environment, installs the package
# with its extras, fetches the sbt launcher through Maven and builds the jar;
# each step is skipped when what it makes is already up to date.
#
#   ./dev.sh example        set up, then run examples/quickstart.py
#   ./dev.sh test [ARGS]    set up, then run the Scala tests (sbt test) alongside pytest ARGS
#   ./dev.sh build          set up only (venv + jar)
#   ./dev.sh bench NAME     set up, then run bench/NAME.py
#   ./dev.sh sbt ARGS       run sbt in jvm/ with the project's settings
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="$ROOT/.venv"
PY="$VENV/bin/python"
STAMPS="$ROOT/.stamps"

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

# The jar is built by jvm/build-jar.sh, which the wheel build (setup.py) runs too.
build_jar_script() { SPARK_JARS_DIR="$(spark_jars_dir)" PYTHON="$PY" "$ROOT/jvm/build-jar.sh" "$@"; }
build_jar() { build_jar_script package; }
run_sbt() { build_jar_script sbt "$@"; }

setup() { setup_python; build_jar; }

# The benchmarks' own JVM classes (jvm/bench, not in the shipped jar), for bench/*.py.
BENCH_JAR="$ROOT/jvm/target/hsbloom-bench.jar"
build_bench_jar() {
  if [ -f "$BENCH_JAR" ] && [ -z "$(find "$ROOT/jvm/bench/src" "$ROOT/hsbloom/jars/hsbloom.jar" -newer "$BENCH_JAR" -print | head -1)" ]; then
    return 0
  fi
  log "building the benchmark jar (jvm/bench)"
  run_sbt bench/package
}

cmd="${1:-}"; [ $# -gt 0 ] && shift
case "$cmd" in
  build) setup ;;
  example) setup; exec "$PY" "$ROOT/examples/quickstart.py" "$@" ;;
  test)
    setup
    # The test jars first, which the Python tests' sessions have on their classpath (tests/conftest.py): the test KMS
    # client (jvm/testkms, for encrypted Parquet) and the test kit (jvm/testkit, the tests' entry into the jar's
    # internals).
    run_sbt testKms/package testKit/package
    # The Scala tests run in the background while pytest runs: compiling and running them keeps about one core
    # busy for minutes, and pytest's processes wait on their JVMs much of the time. The benchmarks compile too,
    # so a change that breaks them fails here. Job control gives sbt its own process group, stopped as a whole.
    scala_log="$ROOT/jvm/target/scala-tests.log"
    mkdir -p "$(dirname "$scala_log")"
    log "running the Scala tests in the background (their output: $scala_log)"
    set -m
    run_sbt test bench/compile > "$scala_log" 2>&1 &
    scala=$!
    set +m
    trap 'kill -- -"$scala" 2>/dev/null || true' EXIT
    log "running pytest"
    # Two test processes (one per core, each with its own SparkSession): much of a test's time is Spark's
    # scheduling and the JVM's latency, not CPU. A test file runs whole in one process (its module fixtures);
    # files go out in collection order, the slowest first (tests/conftest.py, SLOWEST_FILES_FIRST), not xdist's
    # default of the files with the most tests first.
    python_status=0
    (cd "$ROOT" && "$PY" -m pytest -n "${HSBLOOM_TEST_WORKERS:-2}" --dist loadfile --no-loadscope-reorder "$@") ||
      python_status=$?
    log "waiting for the Scala tests"
    scala_status=0
    wait "$scala" || scala_status=$?
    trap - EXIT
    if [ "$scala_status" -ne 0 ]; then
      tail -n 300 "$scala_log"
      log "the Scala tests failed (exit $scala_status); their whole output: $scala_log"
    else
      grep -E '^\[info\] (Run completed|Tests:|All tests passed)' "$scala_log" || true
    fi
    if [ "$python_status" -ne 0 ]; then log "pytest failed (exit $python_status)"; fi
    exit $(( python_status != 0 ? python_status : scala_status )) ;;
  bench)
    setup
    build_bench_jar
    name="${1:?usage: ./dev.sh bench NAME}"; shift
    exec "$PY" "$ROOT/bench/$name.py" "$@" ;;
  sbt) setup_python; run_sbt "$@" ;;
  *) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
