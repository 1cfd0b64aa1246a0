"""Two rules of the jar's layout (docs/design/architecture.md), checked on its sources.

Pure Python, no Spark. No Scala file is over 300 lines (one concept per file),
and the shim, where every Spark-private or version-specific call lives, is a
leaf: it imports no other hsbloom package, so that a Spark upgrade changes it
alone and a change elsewhere cannot reach into Spark's internals through it.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
JVM = ROOT / "jvm"
SHIM = JVM / "src" / "main" / "scala" / "hsbloom" / "shim"
MAX_LINES = 300


def scala_sources() -> list[Path]:
    return sorted(p for p in JVM.rglob("*.scala") if "target" not in p.relative_to(JVM).parts)


def hsbloom_imports(source: str) -> list[str]:
    """The hsbloom packages a Scala source imports, other than the shim itself (`import hsbloom.x...`)."""
    imported = re.findall(r"^\s*import\s+(hsbloom(?:\.\w+)*)", source, re.MULTILINE)
    return [name for name in imported if name != "hsbloom.shim" and not name.startswith("hsbloom.shim.")]


def test_no_scala_file_is_over_300_lines():
    sources = scala_sources()
    assert len(sources) > 100
    lines = {str(p.relative_to(ROOT)): len(p.read_text(encoding="utf-8").splitlines()) for p in sources}
    assert {name: n for name, n in lines.items() if n > MAX_LINES} == {}


def test_the_shim_imports_no_other_hsbloom_package():
    files = sorted(SHIM.glob("*.scala"))
    assert files
    imports = {str(p.relative_to(ROOT)): hsbloom_imports(p.read_text(encoding="utf-8")) for p in files}
    assert {k: v for k, v in imports.items() if v} == {}


def test_an_import_of_another_package_is_found():
    source = "\n".join(["package hsbloom.shim", "import org.apache.spark.rdd.RDD", "import hsbloom.shim.Delta",
                         "import hsbloom.pruning.{A, B}", "  import hsbloom.index._"])
    assert hsbloom_imports(source) == ["hsbloom.pruning", "hsbloom.index._"]
