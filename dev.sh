#!/usr/bin/env bash
# hsbloom's one set-up and task runner. From a fresh clone with only Python 3.11
# and Java 17 present it creates the virtual environment, installs the package
# with its extras, fetches the sbt launcher through Maven and builds the jar;
# each step is skipped when what it makes is already up to date.
#
#   ./dev.sh example        set up, then run examples/quickstart.py
#   ./dev.sh test [ARGS]    set up, then run the Scala tests (sbt test) alongside pytest ARGS on the primary
#                           Spark line, then the compatibility run on every other line (./dev.sh compat)
#   ./dev.sh compat [LINE]  the compatibility run of every line, or of one (4.1, 3.5_2.12): each tested pyspark
#                           release in its own venv (.venvs/), hsbloom pip-installed there, compat/ run by it,
#                           and the line's Scala compatibility suites against its Spark
#   ./dev.sh build          set up only (venv + the primary line's jar)
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

# The jars are built by jvm/build-jar.sh, which the wheel build (setup.py) runs too.
build_jar_script() { PYTHON="$PY" "$ROOT/jvm/build-jar.sh" "$@"; }
PRIMARY_LINE="$(build_jar_script lines | head -1)"
# The venv's jar: the primary line's (the first row of hsbloom/spark_lines.tsv, whose pyspark the dev extra pins).
build_jar() { build_jar_script package "$PRIMARY_LINE"; }
run_sbt() { build_jar_script sbt "$@"; }

setup() { setup_python; build_jar; }

# The benchmarks' own JVM classes (jvm/bench, not in the shipped jar), for bench/*.py.
BENCH_JAR="$ROOT/jvm/target/hsbloom-bench.jar"
build_bench_jar() {
  if [ -f "$BENCH_JAR" ] && [ -z "$(find "$ROOT/jvm/bench/src" "$(build_jar_script jar "$PRIMARY_LINE")" -newer "$BENCH_JAR" -print | head -1)" ]; then
    return 0
  fi
  log "building the benchmark jar (jvm/bench)"
  run_sbt bench/package
}

# The compatibility run (docs/design/spark-versions.md): per line, the whole Scala suite against the line's Spark
# (the table's suite release), and per pyspark release the table names for the line, compat/ in a venv
# of its own with that pyspark and hsbloom pip-installed from this clone (its jars are current, so no sbt runs;
# pip must keep that pyspark). The primary line's first release is the main venv's, whose whole suite ran before.
# A line's id (4.1_2.13, for 4.1 or 4.1_2.13) and its tested releases, from the table (build-jar.sh reads it).
line_id() { build_jar_script line "$1" | cut -f1; }
line_releases() { build_jar_script line "$1" | cut -f2; }
line_connect() { build_jar_script line "$1" | cut -f3; }

compat_scala() {
  local sbt_args=() line project
  for line in "$@"; do
    [ "$(line_id "$line")" = "$PRIMARY_LINE" ] && continue
    project="$(build_jar_script project "$line")"
    sbt_args+=("$project/test")
  done
  [ ${#sbt_args[@]} -gt 0 ] || return 0
  run_sbt "${sbt_args[@]}"
}

# The Scala version (2.12, 2.13) of the Spark a venv's pyspark ships, read off its scala-library jar.
pyspark_scala() {
  local jars="$1"
  ls "$jars" | sed -n 's/^scala-library-\([0-9]*\.[0-9]*\)\..*\.jar$/\1/p' | head -1
}

# One line's environment for one pyspark release: created once, then hsbloom reinstalled from this clone. Where the
# pyspark wheel ships another Scala than the line's (pyspark 3.5 ships 2.12), its jars/ are replaced by the line's
# Spark from the registry (build-jar.sh spark-runtime), as a Spark distribution built for that Scala has them.
compat_python() {
  local line="$1" release="$2" id venv py jars
  id="$(line_id "$line")"
  venv="$ROOT/.venvs/$id-pyspark-$release"
  py="$venv/bin/python"
  if [ ! -x "$py" ] || [ "$(cat "$venv/.ready" 2>/dev/null)" != "$id $release" ]; then
    log "creating .venvs/$id-pyspark-$release"
    rm -rf "$venv" && "$(find_python)" -m venv "$venv"
    "$py" -m pip install --quiet --upgrade pip
    # Connect's client packages only where the line has the Connect server (the table's connect column).
    if [ "$(line_connect "$line")" = yes ]; then
      "$py" -m pip install --quiet "pyspark[connect]==$release" pytest
    else
      "$py" -m pip install --quiet "pyspark==$release" pytest
    fi
    jars="$("$py" -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')"
    if [ "$(pyspark_scala "$jars")" != "${id#*_}" ]; then
      log "pyspark $release ships Scala $(pyspark_scala "$jars"): its jars/ become Spark $release for Scala ${id#*_}"
      build_jar_script spark-runtime "$line" "$jars" || return 1
      [ "$(pyspark_scala "$jars")" = "${id#*_}" ] || { log "no Scala ${id#*_} Spark in $jars"; return 1; }
    fi
    echo "$id $release" > "$venv/.ready"
  fi
  # As a user installs it, with the extras that name pyspark: pip must keep the environment's release.
  local extras=spark; [ "$(line_connect "$line")" = yes ] && extras=spark,connect
  "$py" -m pip install --quiet "$ROOT[$extras]"
  local kept; kept="$("$py" -c 'import pyspark; print(pyspark.__version__)')"
  if [ "$kept" != "$release" ]; then log "pip install of hsbloom replaced pyspark $release with $kept"; return 1; fi
  log "compat/ on pyspark $release"
  # From inside compat/, so that the installed package is the one imported, not this clone's hsbloom/.
  (cd "$ROOT/compat" && "$py" -m pytest -q -p no:cacheprovider)
}

run_compat() {
  [ $# -gt 0 ] || set -- $(build_jar_script lines)
  build_jar_script package "$@"
  local scala_log="$ROOT/jvm/target/compat-scala.log"
  mkdir -p "$(dirname "$scala_log")"
  log "the lines' Scala compatibility suites in the background (their output: $scala_log)"
  set -m
  compat_scala "$@" > "$scala_log" 2>&1 &
  local scala=$!
  set +m
  trap 'kill -- -"$scala" 2>/dev/null || true' EXIT
  local status=0 line release primary_release
  primary_release="$(line_releases "$PRIMARY_LINE" | cut -d' ' -f1)"
  for line in "$@"; do
    for release in $(line_releases "$line"); do
      [ "$(line_id "$line")" = "$PRIMARY_LINE" ] && [ "$release" = "$primary_release" ] && continue
      compat_python "$line" "$release" || { status=1; log "the compatibility run of $line on pyspark $release failed"; }
    done
  done
  local scala_status=0
  wait "$scala" || scala_status=$?
  trap - EXIT
  if [ "$scala_status" -ne 0 ]; then
    tail -n 200 "$scala_log"; log "the lines' Scala compatibility suites failed; their whole output: $scala_log"
  else
    grep -E '^\[info\] (Run completed|Tests:|All tests passed)' "$scala_log" || true
  fi
  return $(( status != 0 ? status : scala_status ))
}

cmd="${1:-}"; [ $# -gt 0 ] && shift
case "$cmd" in
  build) setup ;;
  example) setup; exec "$PY" "$ROOT/examples/quickstart.py" "$@" ;;
  test)
    setup
    # Every line's jar (the wheel tests carry them all), then the test jars, which the Python tests' sessions have
    # on their classpath (tests/conftest.py): the test KMS client (jvm/testkms, for encrypted Parquet) and the test
    # kit (jvm/testkit, the tests' entry into the jar's internals).
    build_jar_script package
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
    compat_status=0
    run_compat || compat_status=$?
    exit $(( python_status != 0 ? python_status : scala_status != 0 ? scala_status : compat_status )) ;;
  compat) setup; run_compat "$@" ;;
  bench)
    setup
    build_bench_jar
    name="${1:?usage: ./dev.sh bench NAME}"; shift
    exec "$PY" "$ROOT/bench/$name.py" "$@" ;;
  sbt) setup_python; run_sbt "$@" ;;
  *) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
