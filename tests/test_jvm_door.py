"""Every Python call into a classic session's JVM goes through one door, hsbloom/jar.py.

Pure Python, no Spark. PySpark's private handles on the JVM (`_jvm`, `_jsparkSession`, `_jdf`, `_jsc`,
`SparkContext._gateway`, a builder's `_options`) are read only in hsbloom/jar.py, so a PySpark upgrade that renames
one changes that file alone, and the package's own JVM classes are named there too; the classes only tests and
benchmarks drive are named beside them (tests/jvm_classes.py, bench/common.py). This reads every Python file of the
repository (with `ast`) and fails on an attribute of those names, or a `getattr` of one, anywhere else.
"""

from __future__ import annotations

import ast
from pathlib import Path

from test_code_references import ROOT, repository_files

DOOR = ROOT / "hsbloom" / "jar.py"
PRIVATE_HANDLES = frozenset({"_jvm", "_jsparkSession", "_jdf", "_jsc", "_gateway", "_options"})


def handles_used(source: str) -> list[tuple[int, str]]:
    """(line, name) of each private handle `source` reads, as `x._jvm` or `getattr(x, "_jvm", ...)`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in PRIVATE_HANDLES:
            found.append((node.lineno, node.attr))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
              and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
              and node.args[1].value in PRIVATE_HANDLES):
            found.append((node.lineno, node.args[1].value))
    return found


def test_the_check_finds_each_way_of_reaching_a_handle():
    source = "a = spark._jvm\nb = getattr(df, '_jdf')\nc = spark.sparkContext._gateway.proc\nd = jar.jvm(spark)\n"
    assert sorted(handles_used(source)) == [(1, "_jvm"), (2, "_jdf"), (3, "_gateway")]


def test_the_door_reads_the_handles():
    # All but `_jsc`, which nothing needs: the JVM session's `sparkContext()` is the JVM SparkContext.
    assert {name for _, name in handles_used(DOOR.read_text())} == PRIVATE_HANDLES - {"_jsc"}


def test_no_python_file_outside_the_door_reaches_into_the_jvm():
    python_files = [f for f in repository_files() if f.suffix == ".py"]
    assert ROOT / "tests" / "jvm_classes.py" in python_files and len(python_files) > 50
    outside = [f"{f.relative_to(ROOT)}:{line}: {name}" for f in python_files if f != DOOR
               for line, name in handles_used(f.read_text(encoding="utf-8"))]
    assert not outside, ("PySpark's private handles reached outside hsbloom/jar.py (use its functions, and name a "
                         "JVM class in tests/jvm_classes.py or bench/common.py):\n" + "\n".join(outside))
