"""The settings registry (hsbloom.conf.HsbloomConf in the jar) against the code and the docs.

Every `spark.hsbloom.*` key the project mentions is a registered setting; docs/configuration.md lists
each with the registry's default; no other page restates a default; in code, key strings are spelled
only in the registry and in hsbloom/settings.py.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from hsbloom import settings
from jvm_classes import jvm_class

ROOT = Path(__file__).resolve().parents[1]
KEY = re.compile(r"(?<![\w.])spark\.hsbloom\.[A-Za-z][A-Za-z.]*[A-Za-z]")
REGISTRY = ROOT / "jvm/src/main/scala/hsbloom/conf/HsbloomConf.scala"
SETTINGS_MODULE = ROOT / "hsbloom/settings.py"
CONFIGURATION_PAGE = ROOT / "docs/configuration.md"


@pytest.fixture(scope="module")
def registry(spark) -> dict[str, dict]:
    entries = json.loads(jvm_class(spark, "settings").json())
    return {e["key"]: e for e in entries}


def _files(*patterns: str) -> list[Path]:
    return sorted(p for pattern in patterns for p in ROOT.glob(pattern) if p.is_file())


CODE = ("hsbloom/**/*.py", "jvm/src/main/**/*.scala", "bench/**/*.py", "examples/**/*.py")
DOCS = ("docs/**/*.md", "README.md")


def test_the_registry_is_complete_and_documented(registry):
    assert registry, "the registry lists no settings"
    for key, entry in registry.items():
        assert KEY.fullmatch(key), key
        assert entry["doc"].strip() and entry["default"].strip() and entry["type"].strip(), key
    named = {v for k, v in vars(settings).items() if k.isupper()}
    assert {settings.ENABLED, settings.SYSTEM_PATH} <= named
    assert named <= set(registry), f"hsbloom/settings.py names unregistered keys: {named - set(registry)}"


def test_every_key_the_project_mentions_is_registered(registry):
    unknown = {}
    for path in _files(*CODE, *DOCS, "tests/**/*.py"):
        for key in KEY.findall(path.read_text(encoding="utf-8")):
            if key not in registry:
                unknown.setdefault(key, []).append(str(path.relative_to(ROOT)))
    assert not unknown, f"keys that are not settings: {unknown}"


INTERNAL_PART = "## Internal settings"


def test_the_configuration_page_lists_every_setting_with_its_default(registry):
    rows, internal_rows, part = {}, set(), ""
    for line in CONFIGURATION_PAGE.read_text(encoding="utf-8").splitlines():
        part = line if line.startswith("## ") else part
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else []
        if len(cells) >= 3 and KEY.fullmatch(cells[0].strip("`")):
            rows[cells[0].strip("`")] = cells[1].strip("`")
            if part.startswith(INTERNAL_PART):
                internal_rows.add(cells[0].strip("`"))
    assert set(rows) == set(registry)
    for key, entry in registry.items():
        assert rows[key] == entry["default"], key
    # The internal settings (for tests; not a promise) are listed in their own part, and only they.
    assert internal_rows == {key for key, entry in registry.items() if entry["internal"]}


def _restated_defaults(text: str, registry: dict[str, dict]) -> list[str]:
    """Sentences after a key that say 'default' or name its numeric default (in bytes, MiB/GiB or seconds)."""
    found = []
    for match in KEY.finditer(text):
        entry = registry.get(match.group())
        if entry is None:
            continue
        sentence = re.split(r"(?<=[.;:])\s|\n\n", text[match.end():match.end() + 200], maxsplit=1)[0]
        values = []
        if entry["default"].isdigit():
            n = int(entry["default"])
            values = [entry["default"], f"{n:,}"]
            for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20)):
                if n % size == 0 and n >= size:
                    values.append(f"{n // size} {unit}")
            if entry["key"].endswith("Ms") and n % 1000 == 0:
                values.append(f"{n // 1000} s")
        if re.search(r"\bdefault", sentence, re.IGNORECASE) or any(v in sentence for v in values):
            found.append(f"{match.group()}{sentence[:80]!r}")
    return found


def test_no_other_page_restates_a_default(registry):
    restated = {}
    for path in _files(*DOCS):
        if path == CONFIGURATION_PAGE:
            continue
        found = _restated_defaults(path.read_text(encoding="utf-8"), registry)
        if found:
            restated[str(path.relative_to(ROOT))] = found
    assert not restated, f"defaults restated outside docs/configuration.md: {restated}"


def test_the_restatement_check_can_fail(registry):
    assert _restated_defaults("`spark.hsbloom.cache.maxBytes` (default 256 MiB)", registry)
    assert _restated_defaults("bounded by `spark.hsbloom.cache.maxBytes` (256 MiB)", registry)
    assert not _restated_defaults("bounded by `spark.hsbloom.cache.maxBytes`; see docs/configuration.md", registry)


def _python_key_literals(path: Path) -> list[str]:
    """`spark.hsbloom.*` keys inside string literals of a Python module (docstrings and comments aside)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and ast.get_docstring(node):
            docstrings.add(id(node.body[0].value))
    return [
        key
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
        for key in KEY.findall(node.value)
    ]


def _scala_key_literals(path: Path) -> list[str]:
    """`spark.hsbloom.*` keys that open a Scala string literal (comments name keys freely)."""
    return re.findall(r'"(spark\.hsbloom\.[A-Za-z.]*[A-Za-z])', path.read_text(encoding="utf-8"))


def test_key_literals_are_spelled_only_in_the_registry_and_the_settings_module():
    spelled = {}
    for path in _files(*CODE):
        if path in (REGISTRY, SETTINGS_MODULE):
            continue
        keys = _python_key_literals(path) if path.suffix == ".py" else _scala_key_literals(path)
        if keys:
            spelled[str(path.relative_to(ROOT))] = keys
    assert not spelled, f"setting keys spelled outside the registry and hsbloom/settings.py: {spelled}"
    assert _scala_key_literals(REGISTRY) and _python_key_literals(SETTINGS_MODULE)
