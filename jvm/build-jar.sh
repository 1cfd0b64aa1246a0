#!/usr/bin/env bash
# Builds hsbloom's jars with sbt, one per Spark line of ../hsbloom/spark_lines.tsv; shared by ../dev.sh and the
# wheel build (../setup.py), so a jar is made one way only. Each jar compiles against its line's Spark, which sbt
# resolves from the package registry, or, for a line the registry serves no release of, the jars/ folder of a
# pyspark release fetched once with pip into jvm/.spark. It needs Java 17 and fetches the sbt launcher once through
# Maven (installing Maven with apt-get as root on Debian when missing). A jar records a fingerprint of the sources
# it was built from, so it is reused only when it provably matches them (file times prove nothing after a clone, a
# copy or an unpacked sdist).
#
#   jvm/build-jar.sh package [LINE...]     build ../hsbloom/jars/hsbloom-spark<line>_<scala>.jar for each line
#                                          (default: every line) unless it is current
#   jvm/build-jar.sh is-current [LINE...]  exit 0 if those jars are built from these sources
#   jvm/build-jar.sh lines                 print the lines (4.2_2.13, ...), the primary line first
#   jvm/build-jar.sh line LINE             print a line's id, its tested pyspark releases and whether it has
#                                          Connect (tab-separated)
#   jvm/build-jar.sh project LINE          print a line's sbt project (root for the primary line)
#   jvm/build-jar.sh jar LINE              print the path of a line's jar
#   jvm/build-jar.sh fetch-spark LINE      fetch the pyspark jars a pyspark-compiled line compiles against
#   jvm/build-jar.sh spark-runtime LINE DIR  copy the jars of a line's Spark (its suite release, from the registry)
#                                          into DIR: a pyspark's jars/ for a line whose Scala the wheel lacks
#   jvm/build-jar.sh sbt ARGS              run sbt in jvm/ with the project's settings
#   jvm/build-jar.sh fingerprint           print the sources' fingerprint (a jar's sources.sha256)
#
# A LINE is a Spark minor (4.2) or a minor and Scala version (3.5_2.12).
set -euo pipefail

JVM="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$JVM")"
LINES_TABLE="$ROOT/hsbloom/spark_lines.tsv"
SBT_VERSION="$(sed -n 's/^sbt.version=//p' "$JVM/project/build.properties")"
LAUNCHER="$JVM/.launcher/sbt-launch-$SBT_VERSION.jar"
PYTHON="${PYTHON:-python3}"

log() { printf '[build-jar] %s\n' "$*" >&2; }

# The table's rows, without comments and header: line, scala, compile, tested, delta, connect (tab-separated).
table_rows() { grep -v '^#' "$LINES_TABLE" | sed 1d | grep -v '^[[:space:]]*$'; }

# LINE_SCALA-BINARY of every row (4.2_2.13), the primary first.
all_lines() { table_rows | awk -F'\t' '{ split($2, v, "."); print $1 "_" v[1] "." v[2] }'; }

# The table's row for a line (4.2 or 4.2_2.13): exactly one, or an error naming the lines there are.
row_of() {
  local want="$1" found
  found="$(table_rows | awk -F'\t' -v w="$want" '{ split($2, v, "."); id = $1 "_" v[1] "." v[2] } w == $1 || w == id')"
  if [ "$(printf '%s\n' "$found" | grep -c .)" != 1 ]; then
    log "error: Spark line '$want' is not exactly one row of $LINES_TABLE; the lines: $(all_lines | tr '\n' ' ')"
    return 1
  fi
  printf '%s\n' "$found"
}

jar_of() { local row; row="$(row_of "$1")" && printf '%s\n' "$row" | awk -F'\t' -v root="$ROOT" '{ split($2, v, "."); print root "/hsbloom/jars/hsbloom-spark" $1 "_" v[1] "." v[2] ".jar" }'; }

# The sbt project of a line: root for the primary (the first row), spark<minor>_<scala> for the others.
project_of() {
  local row; row="$(row_of "$1")" || return 1
  if [ "$row" = "$(table_rows | head -1)" ]; then echo root; return; fi
  printf '%s\n' "$row" | awk -F'\t' '{ split($1, m, "."); split($2, v, "."); print "spark" m[1] m[2] "_" v[1] v[2] }'
}

# For a line compiled against a pyspark release (compile column pyspark:X.Y.Z): that release's jars/ folder in
# jvm/.spark, fetched with pip (its source distribution; only its jars are kept) when missing.
fetch_pyspark_jars() {
  local row compile release dir
  row="$(row_of "$1")" || return 1
  compile="$(printf '%s\n' "$row" | cut -f3)"
  case "$compile" in pyspark:*) ;; *) return 0 ;; esac
  release="${compile#pyspark:}"
  dir="$JVM/.spark/pyspark-$release"
  [ -d "$dir/jars" ] && return 0
  log "fetching pyspark $release with pip for its Spark jars (Spark $release is not in the package registry)"
  local tmp; tmp="$(mktemp -d)"
  local pip=("$PYTHON" -m pip)
  "$PYTHON" -m pip --version >/dev/null 2>&1 || pip=(python3 -m pip)
  "${pip[@]}" download --quiet --no-deps --no-binary :all: "pyspark==$release" -d "$tmp" ||
    { rm -rf "$tmp"; log "error: pip could not fetch pyspark==$release, whose jars Spark $1's jar compiles against"; return 1; }
  mkdir -p "$tmp/unpacked" && tar -xzf "$tmp/pyspark-$release.tar.gz" -C "$tmp/unpacked" "pyspark-$release/deps/jars"
  mkdir -p "$dir" && mv "$tmp/unpacked/pyspark-$release/deps/jars" "$dir/jars"
  rm -rf "$tmp"
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
files += [jvm / "build.sbt", root / "hsbloom" / "version.py", root / "hsbloom" / "spark_lines.tsv"]
digest = hashlib.sha256()
for name in sorted(p.relative_to(root).as_posix() for p in files):
    digest.update(f"{hashlib.sha256((root / name).read_bytes()).hexdigest()}  {name}\n".encode())
print(digest.hexdigest())
PY
}

# One property of the jar's hsbloom-build.properties (empty when the jar or the property is missing).
jar_property() {
  "$PYTHON" - "$1" "$2" 2>/dev/null <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as jar:
    for line in jar.read("hsbloom-build.properties").decode().splitlines():
        if line.startswith(sys.argv[2] + "="):
            print(line.partition("=")[2].strip())
PY
}

# The sources' fingerprint in $SOURCES, computed once a run (the sources do not change while it builds).
SOURCES=""
compute_sources() { [ -n "$SOURCES" ] || SOURCES="$(fingerprint)"; }

# Whether each line's jar exists and is built from these sources.
is_current() {
  local line jar
  compute_sources
  for line in "$@"; do
    jar="$(jar_of "$line")" || return 1
    [ -f "$jar" ] || return 1
    [ "$(jar_property "$jar" sources.sha256)" = "$SOURCES" ] || return 1
  done
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
  require_java
  fetch_sbt_launcher
  compute_sources
  # build.sbt stamps the jar with the fingerprint (sources.sha256 in hsbloom-build.properties).
  # sbt runs one command and exits, too briefly to repay the JIT's server compiler: the client compiler only
  # (docs/design/decisions.md, "The test run"). Forked test JVMs keep the default.
  (cd "$JVM" && HSBLOOM_SOURCES_SHA256="$SOURCES" java \
      -Xmx2g -Xss4m -XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=256m \
      -Dsbt.repository.config="$JVM/project/repositories" -Dsbt.override.build.repos=true \
      -Dsbt.ci=true -Dsbt.color=false -Dsbt.supershell=false -Dsbt.server.forcestart=false \
      -jar "$LAUNCHER" "$@" </dev/null)
}

cmd="${1:-}"; [ $# -gt 0 ] && shift
case "$cmd" in
  package)
    [ $# -gt 0 ] || set -- $(all_lines)
    if is_current "$@"; then exit 0; fi
    projects=()
    for line in "$@"; do
      if ! is_current "$line"; then fetch_pyspark_jars "$line"; projects+=("$(project_of "$line")/package"); fi
    done
    log "building the hsbloom jars with sbt $SBT_VERSION: ${projects[*]}"
    run_sbt "${projects[@]}"
    is_current "$@" || { log "error: sbt finished, but a jar of $* is missing or not stamped with these sources"; exit 1; } ;;
  is-current) [ $# -gt 0 ] || set -- $(all_lines); is_current "$@" ;;
  lines) all_lines ;;
  line) row_of "${1:?usage: build-jar.sh line LINE}" | awk -F'\t' '{ split($2, v, "."); print $1 "_" v[1] "." v[2] "\t" $5 "\t" $7 }' ;;
  project) project_of "${1:?usage: build-jar.sh project LINE}" ;;
  jar) jar_of "${1:?usage: build-jar.sh jar LINE}" ;;
  fetch-spark) fetch_pyspark_jars "${1:?usage: build-jar.sh fetch-spark LINE}" ;;
  spark-runtime)
    project="$(project_of "${1:?usage: build-jar.sh spark-runtime LINE DIR}")" || exit 1
    dir="$(realpath -m "${2:?usage: build-jar.sh spark-runtime LINE DIR}")"
    run_sbt "$project/exportSparkRuntime $dir" ;;
  fingerprint) fingerprint ;;
  sbt) run_sbt "$@" ;;
  *) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
