"""The rules of the jar's layout (docs/design/architecture.md#layers), checked on its sources.

Pure Python, no Spark. The jar's code is in layers: `LAYERS` lists its nodes
bottom to top, and a node may import only the nodes listed before it, so the
stored format never depends on what reads it, storage never on the rules, and
nothing but the entry points on the public API. A node is a package (a folder
under jvm/src/main/scala/hsbloom/), or for the root package `hsbloom`, whose
public names users import (`hsbloom.BFIndexConfig`, `hsbloom.Hyperspace`), a
set of its files: its plain data types at the bottom, its entry points on top.

The test reads every Scala source of jvm/src/main: its package clauses, its
imports (grouped, renamed, multi-line, relative ones in the root package),
its fully qualified `hsbloom.x.Y` uses and, in the root package, its uses of
the other root files' names, all outside comments and string literals (the
code an interpolated string holds, `s"${Layout.LogDir}"`, is code). It
fails on a reference against the table, naming the file, the reference and
the two nodes, and on any cycle of the node graph. No Scala file is over 300
lines (one concept per file), and the shim, where every Spark-private or
version-specific call lives, imports nothing of hsbloom's but, if it must,
the stored format: a Spark upgrade changes it alone.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from scala_text import block_comment_end

ROOT = Path(__file__).resolve().parent.parent
JVM = ROOT / "jvm"
MAIN = JVM / "src" / "main" / "scala" / "hsbloom"
ARCHITECTURE = ROOT / "docs" / "design" / "architecture.md"
MAX_LINES = 300

# The jar's nodes, bottom to top: a node may import only the nodes listed before it. A package's node is named
# by the package; the root package's two nodes by what they hold, each with its files (by name, without .scala).
# docs/design/architecture.md draws this table (test_the_architecture_doc_draws_the_layer_table).
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("hsbloom.sbbf", ()),
    ("hsbloom.substring", ()),
    ("hsbloom.conf", ()),
    ("hsbloom (vocabulary)",
     ("HsbloomException", "BFIndexConfig", "IndexInfo", "RefreshResult", "VerifyResult", "BuildInfo")),
    ("hsbloom.format", ()),
    ("hsbloom.shim", ()),
    ("hsbloom.log", ()),
    ("hsbloom.index", ()),
    ("hsbloom.catalog", ()),
    ("hsbloom.indexing", ()),
    ("hsbloom.operations", ()),
    ("hsbloom.refresh", ()),
    ("hsbloom.rules", ()),
    ("hsbloom.pruning", ()),
    ("hsbloom.join", ()),
    ("hsbloom.dml", ()),
    ("hsbloom.functions", ()),
    ("hsbloom.explain", ()),
    ("hsbloom.api", ()),
    ("hsbloom.sql", ()),
    ("hsbloom (entry points)", ("Hyperspace", "HsbloomExtension", "ExecutorJar")),
)
SHIM = "hsbloom.shim"
# What the shim may import besides nothing: the stored format, if it must.
SHIM_MAY_IMPORT = {"hsbloom.format"}
# Files of the shim's folder declared in Spark's packages, for access Scala grants only there (`private[spark]`).
SHIM_SPARK_PACKAGES = {"org.apache.spark.hsbloom", "org.apache.spark.sql.hsbloom"}


def scala_sources(root: Path = JVM) -> list[Path]:
    return sorted(p for p in root.rglob("*.scala") if "target" not in p.relative_to(root).parts)


def line_starts(code: str) -> list[int]:
    """The offset each line of `code` starts at, for `line_at`."""
    return [0] + [m.end() for m in re.finditer("\n", code)]


def line_at(starts: list[int], offset: int) -> int:
    return bisect.bisect_right(starts, offset)


def code_only(text: str) -> str:
    """`text` with its comments (`//`, nested `/* */`) and string and char literals blanked, lines kept; the code an
    interpolated string holds (`s"${Layout.LogDir}/$name"`) is kept."""
    out, i, n = [], 0, len(text)
    char_literal = re.compile(r"'(?:\\.|[^\\'\n])'")

    def blank(start: int, end: int) -> int:
        out.append(re.sub(r"[^\n]", " ", text[start:end]))
        return end

    def string(start: int, quote: str) -> int:
        """Emits the string literal at `start` (its code kept if interpolated) and returns where it ends."""
        interpolated = start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_")
        out.append(" " * len(quote))
        i = start + len(quote)
        while i < n:
            if text.startswith(quote, i) and (quote == '"' or not text.startswith('""""', i)):
                out.append(" " * len(quote))
                return i + len(quote)
            if quote == '"' and text[i] == "\n":
                return i
            if quote == '"' and text[i] == "\\" and i + 1 < n:
                out.append("  ")
                i += 2
            elif interpolated and text.startswith("${", i):
                depth, j = 1, i + 2
                while j < n and depth:
                    depth += {"{": 1, "}": -1}.get(text[j], 0)
                    j += 1
                out.append("  " + code_only(text[i + 2:j - 1]) + " ")
                i = j
            elif interpolated and text[i] == "$" and i + 1 < n and (text[i + 1].isalpha() or text[i + 1] == "_"):
                name = re.match(r"\w+", text[i + 1:]).group(0)
                out.append(" " + name)
                i += 1 + len(name)
            else:
                out.append("\n" if text[i] == "\n" else " ")
                i += 1
        return i

    while i < n:
        if text.startswith('"""', i):
            i = string(i, '"""')
        elif text[i] == '"':
            i = string(i, '"')
        elif text[i] == "'" and char_literal.match(text, i):
            i = blank(i, char_literal.match(text, i).end())
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = blank(i, n if end < 0 else end)
        elif text.startswith("/*", i):
            i = blank(i, block_comment_end(text, i))
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


@dataclass(frozen=True)
class Reference:
    """One use of hsbloom's code in a Scala file: `text` as written (an import, or a qualified or plain name)."""

    line: int
    text: str
    # The referenced package's folder under hsbloom/ ("" for the root package) and, in the root, the name used.
    folder: str
    name: str = ""


def package_clauses(code: str) -> list[str]:
    """The file's package clauses in order (`package a.b` lines; a package object is not one)."""
    return re.findall(r"^\s*package\s+(?!object\b)([\w.]+)", code, re.MULTILINE)


def _import_clauses(code: str) -> list[tuple[int, int, str]]:
    """(first line, last line, text) of each import clause, a multi-line `{...}` joined."""
    found = []
    for match in re.finditer(r"(?<![\w.])import\s+", code):
        i, depth = match.end(), 0
        while i < len(code) and (depth or code[i] not in "\n;"):
            depth += {"{": 1, "}": -1}.get(code[i], 0)
            i += 1
        first = code.count("\n", 0, match.start()) + 1
        found.append((first, first + code.count("\n", match.start(), i), " ".join(code[match.end():i].split())))
    return found


def _split_top_level(text: str) -> list[str]:
    """`a.b, c.{d, e}` as ['a.b', 'c.{d, e}']."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def _in_root_package(code: str) -> bool:
    """Whether the file's code is inside package `hsbloom` itself, where the root's names need no import."""
    return package_clauses(code) == ["hsbloom"]


def references(source: str, folders: set[str], root_names: set[str]) -> list[Reference]:
    """Every reference to hsbloom's code in a Scala `source`: `folders` are the subpackages' folders, `root_names`
    the names the root package's files declare."""
    code = code_only(source)
    starts, lines = line_starts(code), code.splitlines()
    in_root = _in_root_package(code)
    found: list[Reference] = []

    def resolve(line: int, text: str, path: str) -> None:
        """A dotted `path` below the root package (`index.Layout`, `{A, B => C}`, `A`)."""
        head = re.match(r"\{([^}]*)\}|(\w+)", path)
        if head and head.group(1) is not None:
            for selector in head.group(1).split(","):
                name = selector.split("=>")[0].strip()
                if name:
                    found.append(Reference(line, text, "", name))
        elif head and head.group(2) in folders:
            found.append(Reference(line, text, head.group(2)))
        elif head:
            found.append(Reference(line, text, "", head.group(2)))
        else:
            found.append(Reference(line, text, "", path))  # `import hsbloom._`: named, to be refused

    clauses = _import_clauses(code)
    for line, _, clause in clauses:
        for expr in _split_top_level(clause):
            path = re.sub(r"\s+", "", expr)
            qualified = re.match(r"(?:_root_\.)?hsbloom(?:\.(.*))?$", path)
            if qualified:
                resolve(line, f"import {expr}", qualified.group(1) or "_")
            elif in_root and path.split(".")[0] in folders:
                resolve(line, f"import {expr}", path)
    import_lines = {line for first, last, _ in clauses for line in range(first, last + 1)}
    for match in re.finditer(r"(?<![\w.])(?:_root_\.)?hsbloom((?:\.\w+)+)", code):
        line = line_at(starts, match.start())
        if line not in import_lines and not re.match(r"\s*package\b", lines[line - 1]):
            resolve(line, match.group(0), match.group(1)[1:])
    if in_root:
        own = set(declared_names(code))
        for match in re.finditer(r"(?<![\w.])(\w+)(?:\.([A-Za-z]\w*))?", code):
            line = line_at(starts, match.start())
            if line in import_lines or re.match(r"\s*package\b", lines[line - 1]):
                continue
            first, second = match.group(1), match.group(2)
            if first in folders and second and second[0].isupper():
                found.append(Reference(line, match.group(0), first))
            elif first in root_names and first not in own:
                found.append(Reference(line, first, "", first))
    return found


def declared_names(code: str) -> list[str]:
    """The top-level classes, traits and objects of a file (what other files can name)."""
    return re.findall(r"^(?:(?:final|sealed|abstract|case|private\[\w+\])\s+)*(?:class|trait|object)\s+(\w+)",
                      code, re.MULTILINE)


@dataclass(frozen=True)
class ScalaFile:
    path: Path
    node: str
    packages: list[str]
    references: list[Reference]


def node_of(path: Path, main: Path = MAIN) -> str | None:
    """The node a Scala file of `main` belongs to: its folder's, or in the root its file's (None: in no node)."""
    parts = path.relative_to(main).parts
    if len(parts) > 1:
        return f"hsbloom.{parts[0]}"
    for node, files in LAYERS:
        if path.stem in files:
            return node
    return None


def read_sources(main: Path = MAIN) -> list[ScalaFile]:
    sources = scala_sources(main)
    folders = {p.relative_to(main).parts[0] for p in sources if len(p.relative_to(main).parts) > 1}
    root_names = {name for p in sources if p.parent == main
                  for name in declared_names(code_only(p.read_text(encoding="utf-8")))}
    result = []
    for path in sources:
        text = path.read_text(encoding="utf-8")
        result.append(ScalaFile(path, node_of(path, main), package_clauses(code_only(text)),
                                 references(text, folders, root_names)))
    return result


def root_name_nodes(sources: list[ScalaFile], main: Path = MAIN) -> dict[str, str]:
    """Each name a root file declares, with its file's node."""
    return {name: s.node for s in sources if s.path.parent == main
            for name in declared_names(code_only(s.path.read_text(encoding="utf-8")))}


def target_node(ref: Reference, names: dict[str, str]) -> str | None:
    return f"hsbloom.{ref.folder}" if ref.folder else names.get(ref.name)


def edges(sources: list[ScalaFile], main: Path = MAIN) -> list[tuple[ScalaFile, Reference, str | None]]:
    """(file, reference, the node referenced: None when it names nothing of hsbloom's) of every reference from one
    node to another."""
    names = root_name_nodes(sources, main)
    found = []
    for s in sources:
        for ref in s.references:
            target = target_node(ref, names)
            if target != s.node:
                found.append((s, ref, target))
    return found


def violations(sources: list[ScalaFile], main: Path = MAIN) -> list[str]:
    """Each reference against `LAYERS`, as 'file:line: reference: node (layer) may not import node (layer)'."""
    rank = {node: at for at, (node, _) in enumerate(LAYERS, 1)}
    found = []
    for s, ref, target in edges(sources, main):
        where = f"{s.path.relative_to(main.parent)}:{ref.line}: {ref.text}"
        if target is None:
            found.append(f"{where}: names nothing this test can place (import the name itself)")
        elif s.node not in rank or target not in rank:
            found.append(f"{where}: {s.node if s.node not in rank else target} is in no layer of LAYERS")
        elif rank[target] > rank[s.node]:
            found.append(f"{where}: {s.node} (layer {rank[s.node]}) may not import {target} (layer {rank[target]})")
    return found


def node_graph(sources: list[ScalaFile], main: Path = MAIN) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {s.node: set() for s in sources}
    for s, _, target in edges(sources, main):
        if target is not None:
            graph[s.node].add(target)
            graph.setdefault(target, set())
    return graph


def strongly_connected_components(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, each component sorted, components in the order found (a node's after those it uses)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(graph.get(node, ())):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components


def doc_layer_table(text: str) -> list[list[str]]:
    """The cells of the rows of the first table under the heading '## Layers' of a Markdown page."""
    rows, in_section = [], False
    for line in text.splitlines():
        if line.startswith("## "):
            if in_section:
                break
            in_section = line.strip() == "## Layers"
        elif in_section and line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
        elif in_section and rows:
            break
    return [row for row in rows[2:]]  # past the header and its rule


# --- the jar's sources


@pytest.fixture(scope="module")
def sources() -> list[ScalaFile]:
    return read_sources()


def test_no_scala_file_is_over_300_lines():
    sources = scala_sources()
    assert len(sources) > 100
    lines = {str(p.relative_to(ROOT)): len(p.read_text(encoding="utf-8").splitlines()) for p in sources}
    assert {name: n for name, n in lines.items() if n > MAX_LINES} == {}


def test_every_file_is_in_a_node_and_declares_its_folders_package(sources):
    assert len(sources) > 100
    assert [str(s.path.relative_to(MAIN)) for s in sources if s.node is None] == []
    wrong = {}
    for s in sources:
        parts = s.path.relative_to(MAIN).parts
        expected = [".".join(["hsbloom", *parts[:-1]])]
        if s.node == SHIM and (s.packages == ["hsbloom"] and s.path.name == "package.scala"
                               or len(s.packages) == 1 and s.packages[0] in SHIM_SPARK_PACKAGES):
            continue
        if s.packages != expected:
            wrong[str(s.path.relative_to(MAIN))] = s.packages
    assert wrong == {}


def test_every_import_goes_down_the_layers(sources):
    assert violations(sources) == []


def test_the_node_graph_has_no_cycle(sources):
    graph = node_graph(sources)
    assert len(graph) == len(LAYERS)
    components = strongly_connected_components(graph)
    assert [c for c in components if len(c) > 1] == []
    assert sorted(c[0] for c in components) == sorted(node for node, _ in LAYERS)


def test_the_shim_imports_no_other_hsbloom_package(sources):
    shim = [s for s in sources if s.node == SHIM]
    assert shim
    imported = {str(s.path.relative_to(MAIN)): sorted({t for f, _, t in edges(sources) if f is s} - SHIM_MAY_IMPORT)
                for s in shim}
    assert {k: v for k, v in imported.items() if v} == {}


def test_the_architecture_doc_draws_the_layer_table():
    rows = doc_layer_table(ARCHITECTURE.read_text(encoding="utf-8"))
    assert [(row[0], row[1].strip("`")) for row in rows] == [
        (str(at), node) for at, (node, _) in enumerate(LAYERS, 1)]
    for row, (node, files) in zip(rows, LAYERS):
        assert [f for f in files if f"`{f}`" not in row[2]] == [], node


# --- the parser and the checks themselves

FOLDERS = {"index", "log", "pruning", "shim", "sql", "api", "format"}


def _targets(source: str, root_names: set[str] = frozenset()) -> list[tuple[str, str]]:
    return [(r.folder, r.name) for r in references(source, FOLDERS, set(root_names))]


def test_an_import_of_another_package_is_found():
    source = "\n".join(["package hsbloom.shim", "import org.apache.spark.rdd.RDD", "import hsbloom.shim.Delta",
                         "import hsbloom.pruning.{A, B}", "  import hsbloom.index._"])
    assert [r.text for r in references(source, FOLDERS, set())] == [
        "import hsbloom.shim.Delta", "import hsbloom.pruning.{A, B}", "import hsbloom.index._"]
    assert _targets(source) == [("shim", ""), ("pruning", ""), ("index", "")]


def test_grouped_renamed_multi_line_and_comma_separated_imports_are_found():
    source = "\n".join([
        "package hsbloom.log",
        "import hsbloom.{BFIndexConfig, HsbloomException => Failure}",
        "import hsbloom.index.{",
        "  Layout,",
        "  FileKey => Key}",
        "import java.io.File, hsbloom.sql.Grammar",
        "import _root_.hsbloom.api.HyperspaceApi",
        "import hsbloom.BuildInfo.version",
    ])
    assert _targets(source) == [("", "BFIndexConfig"), ("", "HsbloomException"), ("index", ""), ("sql", ""),
                                ("api", ""), ("", "BuildInfo")]
    assert references(source, FOLDERS, set())[2].line == 3


def test_qualified_uses_are_found_outside_comments_and_strings():
    source = "\n".join([
        "package hsbloom.log",
        "object A {",
        "  val a = hsbloom.index.Layout.LogDir // not hsbloom.sql.Grammar",
        "  val b = hsbloom.BFIndexConfig.DefaultFpp",
        '  val c = s"hsbloom.pruning.${x}" + """/* hsbloom.api.X """ + \'"\'',
        "  /* hsbloom.shim.Delta /* nested */ hsbloom.shim.Delta */",
        "  val d = org.apache.spark.sql.hsbloom.Datasets",
        '  val e = s"at most ${hsbloom.format.Layout.MaxEntryDataParts} in $path"',
        "}",
    ])
    assert _targets(source) == [("index", ""), ("", "BFIndexConfig"), ("format", "")]


def test_in_the_root_package_relative_and_plain_names_are_found():
    source = "\n".join([
        "package hsbloom",
        "import sql.HsbloomSqlParser",
        "class Hyperspace(spark: SparkSession) extends api.HyperspaceApi(spark) {",
        "  def f(log: Logger) = { log.warn(\"x\"); RefreshResult.Full }",
        '  def g = s"${BuildInfo.version}" // not Hyperspace itself, nor IndexInfo',
        "}",
    ])
    assert _targets(source, {"Hyperspace", "RefreshResult", "BuildInfo", "IndexInfo"}) == [
        ("sql", ""), ("api", ""), ("", "RefreshResult"), ("", "BuildInfo")]
    # Outside the root package, a root name needs an import: a plain `RefreshResult` is another one.
    assert _targets(source.replace("package hsbloom", "package hsbloom.sql"), {"RefreshResult"}) == []


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    main = tmp_path / "hsbloom"
    for name, text in files.items():
        (main / name).parent.mkdir(parents=True, exist_ok=True)
        (main / name).write_text(text, encoding="utf-8")
    return main


def test_an_import_up_the_layers_fails_naming_the_file_and_both_layers(tmp_path):
    main = _tree(tmp_path, {
        "format/LogEntry.scala": "package hsbloom.format\nimport hsbloom.log.LogStore\nobject LogEntry\n",
        "log/LogStore.scala": "package hsbloom.log\nimport hsbloom.format.LogEntry\nobject LogStore\n",
        "BFIndexConfig.scala": "package hsbloom\nobject BFIndexConfig { Hyperspace }\n",
        "Hyperspace.scala": "package hsbloom\nclass Hyperspace { BFIndexConfig }\n",
    })
    assert violations(read_sources(main), main) == [
        "hsbloom/BFIndexConfig.scala:2: Hyperspace: hsbloom (vocabulary) (layer 4) may not import "
        "hsbloom (entry points) (layer 21)",
        "hsbloom/format/LogEntry.scala:2: import hsbloom.log.LogStore: hsbloom.format (layer 5) may not import "
        "hsbloom.log (layer 7)",
    ]


def test_a_name_the_test_cannot_place_fails(tmp_path):
    main = _tree(tmp_path, {"log/A.scala": "package hsbloom.log\nimport hsbloom._\nimport hsbloom.Nothing\nobject A\n"})
    assert violations(read_sources(main), main) == [
        "hsbloom/log/A.scala:2: import hsbloom._: names nothing this test can place (import the name itself)",
        "hsbloom/log/A.scala:3: import hsbloom.Nothing: names nothing this test can place (import the name itself)",
    ]


def test_a_cycle_is_one_component(tmp_path):
    main = _tree(tmp_path, {
        "index/A.scala": "package hsbloom.index\nimport hsbloom.log.B\nobject A\n",
        "log/B.scala": "package hsbloom.log\nobject B { hsbloom.index.A }\n",
        "sbbf/C.scala": "package hsbloom.sbbf\nobject C\n",
    })
    assert strongly_connected_components(node_graph(read_sources(main), main)) == [
        ["hsbloom.index", "hsbloom.log"], ["hsbloom.sbbf"]]


def test_the_doc_table_is_read_from_its_section():
    page = "\n".join(["# A", "## Layers", "", "text", "", "| # | node | what |", "|---|---|---|",
                      "| 1 | `hsbloom.sbbf` | filters |", "| 2 | `hsbloom (vocabulary)` | `BuildInfo` |", "",
                      "| 9 | not | this one |", "## Next", "| 3 | nor | this |"])
    assert doc_layer_table(page) == [["1", "`hsbloom.sbbf`", "filters"], ["2", "`hsbloom (vocabulary)`", "`BuildInfo`"]]


# --- the shim's version folders: jvm/src/main/spark-X.Y and spark-X.Y-A.B (compiled into the jars of lines X.Y to
# A.B), and scala-2.12 and scala-2.13 (sbt's own, compiled for that Scala version)

VERSION_FOLDERS = sorted(p for p in (JVM / "src" / "main").iterdir() if p.is_dir() and p.name.startswith("spark-"))
SCALA_FOLDERS = sorted(p for p in (JVM / "src" / "main").iterdir() if p.is_dir() and re.fullmatch(r"scala-2\.1\d", p.name))


def shim_only(folder: Path) -> None:
    """Every Scala file of `folder` is the shim's, declares its package, and imports nothing the shim may not."""
    sources = read_sources(folder / "hsbloom")
    assert sources, folder
    assert {str(s.path.relative_to(folder)): s.node for s in sources if s.node != SHIM} == {}
    assert {str(s.path.relative_to(folder)): s.packages for s in sources if s.packages != [SHIM]} == {}
    imported = {(str(s.path.relative_to(folder)), t) for s, _, t in edges(sources, folder / "hsbloom")
                if t is not None and t not in SHIM_MAY_IMPORT}
    assert imported == set()


def test_scala_version_folders_hold_only_the_shim_and_the_same_names():
    assert [f.name for f in SCALA_FOLDERS] == ["scala-2.12", "scala-2.13"]
    for folder in SCALA_FOLDERS:
        shim_only(folder)
    files = [sorted(str(p.relative_to(f)) for p in scala_sources(f)) for f in SCALA_FOLDERS]
    assert files[0] == files[1]  # each Scala version gets the same objects


def test_version_folders_hold_only_the_shim_and_serve_a_supported_line():
    from hsbloom.spark_lines import supported_lines

    minors = {tuple(map(int, line.minor.split("."))) for line in supported_lines()}
    assert VERSION_FOLDERS
    for folder in VERSION_FOLDERS:
        found = re.fullmatch(r"spark-(\d+)\.(\d+)(?:-(\d+)\.(\d+))?", folder.name)
        assert found, f"{folder.name}: a version folder is named spark-X.Y or spark-X.Y-A.B"
        low = (int(found[1]), int(found[2]))
        high = (int(found[3]), int(found[4])) if found[3] else low
        assert any(low <= m <= high for m in minors), f"{folder.name} serves no line of hsbloom/spark_lines.tsv"
        shim_only(folder)
