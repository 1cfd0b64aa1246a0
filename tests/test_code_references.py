"""Paths named in code comments and in Markdown lead to files that exist.

Pure Python, no Spark. Comments, docstrings and documents point readers at other files
("docs/design/zones.md", "hsbloom/explain.py", "IndexBuild.scala"); when a file
moves, such a pointer goes stale without failing anything else. This scans the
comments of the Python, Scala, shell and SQL files of the repository (Python's
docstrings too), and every line of every Markdown file, for names of repository files: a path with a `/` ending in
.py, .scala, .md, .sh, .sql or .toml, or a bare Scala file name (`Sbbf.scala`). A path must exist
relative to the repository root, to the commenting file's folder, or to docs/
(doc-relative, as the docs link each other: "design/zones.md"); a bare Scala
file name anywhere in the tree. Web addresses and `$VAR/...` paths are not
files of the repository and are left alone.
"""

from __future__ import annotations

import ast
import io
import re
import subprocess
import tokenize
from pathlib import Path

import pytest

from scala_text import block_comment_end

ROOT = Path(__file__).resolve().parent.parent

_EXTENSIONS = ("py", "scala", "md", "sh", "sql", "toml")
# A path starts where no path, URL or variable character precedes it (so never inside https://host/a.md or
# $ROOT/x.py), has at least one '/', and ends in one of the extensions, not followed by more of a name.
_PATH = re.compile(
    r"(?<![\w./:$~-])((?:\.\.?/)*[\w.-]+(?:/[\w.-]+)*/[\w.-]+\.(?:" + "|".join(_EXTENSIONS) + r"))(?![\w/-])"
)
_BARE_SCALA = re.compile(r"(?<![\w./:$~-])([A-Z]\w*\.scala)(?![\w/-])")
# Spelled in capitals, a file name is a placeholder of a usage text (./dev.sh bench NAME runs bench/NAME.py).
_PLACEHOLDERS = {"NAME"}
# Build output and environments: not the repository's own files.
_SKIPPED_DIRS = {".git", ".venv", "target", "__pycache__", ".pytest_cache", ".hypothesis", "build", "dist",
                 ".bsp", ".launcher", ".stamps", "data"}


def repository_files(root: Path = ROOT) -> list[Path]:
    """The repository's files, tracked or new (git's list when there is one; else a walk without build output)."""
    try:
        out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=root,
                             capture_output=True, check=True).stdout.decode()
        files = [root / name for name in out.split("\0") if name]
        return [f for f in files if f.is_file()]
    except (OSError, subprocess.CalledProcessError):
        return [p for p in root.rglob("*")
                if p.is_file() and not _SKIPPED_DIRS.intersection(p.relative_to(root).parts[:-1])]


def python_comments(text: str) -> list[tuple[int, str]]:
    """(line, text) of each `#` comment and docstring of Python source."""
    found = []
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            found.append((token.start[0], token.string))
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc is not None:
                found.append((node.body[0].lineno, doc))
    return found


def scala_comments(text: str) -> list[tuple[int, str]]:
    """(line, text) of each `//` and (nested) `/* */` comment of Scala source, string and char literals skipped."""
    found, i, n = [], 0, len(text)
    char_literal = re.compile(r"'(?:\\.|[^\\'\n])'")
    while i < n:
        if text.startswith('"""', i):
            end = text.find('"""', i + 3)
            i = n if end < 0 else end + 3
            while i < n and text[i] == '"':
                i += 1
        elif text[i] == '"':
            i += 1
            while i < n and text[i] not in '"\n':
                i += 2 if text[i] == "\\" else 1
            i += 1
        elif text[i] == "'":
            literal = char_literal.match(text, i)
            i = literal.end() if literal else i + 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            found.append((text.count("\n", 0, i) + 1, text[i:end]))
            i = end
        elif text.startswith("/*", i):
            j = block_comment_end(text, i)
            found.append((text.count("\n", 0, i) + 1, text[i:j]))
            i = j
        else:
            i += 1
    return found


def line_comments(text: str, marker: str) -> list[tuple[int, str]]:
    """(line, text) of each comment of a shell (`#`) or SQL (`--`) file: from a marker that starts a word, outside
    quotes, to the end of the line."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        quote = None
        for i, ch in enumerate(line):
            if quote:
                quote = None if ch == quote else quote
            elif ch in "'\"":
                quote = ch
            elif line.startswith(marker, i) and (i == 0 or line[i - 1].isspace()):
                if not (number == 1 and line.startswith("#!")):
                    found.append((number, line[i:]))
                break
    return found


def comments(path: Path) -> list[tuple[int, str]]:
    """(line, text) of what `path` says to a reader: its comments, or every line of a Markdown file (all prose)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".md":
        return list(enumerate(text.splitlines(), 1))
    if path.suffix == ".py":
        return python_comments(text)
    if path.suffix == ".scala":
        return scala_comments(text)
    if path.suffix == ".sql":
        return line_comments(text, "--")
    return line_comments(text, "#")


def named_paths(comment: str) -> list[str]:
    """The repository paths a comment names: paths with a '/' and bare Scala file names."""
    return [m.group(1) for m in _PATH.finditer(comment)] + [m.group(1) for m in _BARE_SCALA.finditer(comment)]


def missing_references(path: Path, root: Path = ROOT, scala_names: set[str] | None = None) -> list[str]:
    """Each path named in `path`'s comments that names no file, as 'file:line: path'."""
    if scala_names is None:
        scala_names = {f.name for f in repository_files(root) if f.suffix == ".scala"}
    missing = []
    for line, comment in comments(path):
        for name in named_paths(comment):
            if Path(name).stem in _PLACEHOLDERS:
                continue
            if "/" in name:
                found = any((base / name).exists() for base in (root, path.parent, root / "docs"))
            else:
                found = name in scala_names
            if not found:
                missing.append(f"{path.relative_to(root)}:{line}: {name}")
    return missing


def _scanned(root: Path = ROOT) -> list[Path]:
    return sorted(f for f in repository_files(root)
                  if f.suffix in (".py", ".scala", ".sh", ".sql", ".md"))


def test_every_path_named_in_a_code_comment_exists():
    files = repository_files()
    scala_names = {f.name for f in files if f.suffix == ".scala"}
    scanned = _scanned()
    assert any(f.suffix == ".scala" for f in scanned) and any(f.suffix == ".py" for f in scanned)
    markdown = {ROOT / "README.md", ROOT / "docs" / "design" / "sbbf.md", ROOT / "tests" / "vectors" / "README.md"}
    assert markdown <= set(scanned)
    missing = [m for f in scanned for m in missing_references(f, scala_names=scala_names)]
    assert missing == []


def test_comments_are_found_in_each_language():
    scala = 'val url = "http://x/a.md" // see docs/a.md\n/* in docs/b.md /* nested */ still */ val c = \'"\'\n'
    assert [c for _, c in scala_comments(scala)] == ["// see docs/a.md", "/* in docs/b.md /* nested */ still */"]
    python = '"""Module docs/c.md."""\nx = "docs/not_a_comment.md"  # see docs/d.md\n'
    assert sorted(c for _, c in python_comments(python)) == ["# see docs/d.md", "Module docs/c.md."]
    shell = '#!/bin/sh\necho "a # b" # see jvm/e.sh\n# whole line f/g.sh\n'
    assert [c for _, c in line_comments(shell, "#")] == ["# see jvm/e.sh", "# whole line f/g.sh"]


def test_named_paths_are_files_not_addresses_or_variables():
    assert named_paths("docs/pruning.md#when-an-index-is-used and ../security.md") == [
        "docs/pruning.md", "../security.md"]
    assert named_paths("see https://example.org/x.md, $ROOT/pyproject.toml, /abs/p.py, www.scala-lang.org") == []
    assert named_paths("IndexBuild.scala (jvm/src/main/scala/hsbloom/indexing/IndexBuild.scala)") == [
        "jvm/src/main/scala/hsbloom/indexing/IndexBuild.scala", "IndexBuild.scala"]


def test_a_made_up_path_is_reported(tmp_path: Path):
    """The check itself can fail: a missing path and a missing Scala file are reported, existing ones are not."""
    (tmp_path / "docs" / "design").mkdir(parents=True)
    (tmp_path / "docs" / "design" / "zones.md").write_text("# Zones\n", encoding="utf-8")
    (tmp_path / "Real.scala").write_text("object Real\n", encoding="utf-8")
    source = tmp_path / "code.py"
    source.write_text(
        '"""See docs/design/zones.md, design/zones.md and Real.scala."""\n'
        "# Moved: hsbloom/made_up.py and Imagined.scala\n",
        encoding="utf-8",
    )
    assert missing_references(source, root=tmp_path, scala_names={"Real.scala"}) == [
        "code.py:2: hsbloom/made_up.py",
        "code.py:2: Imagined.scala",
    ]


def test_every_line_of_a_markdown_file_is_read(tmp_path: Path):
    """A Markdown file is all prose: a path in its text, in backquotes or in a link, must exist too."""
    (tmp_path / "docs" / "design").mkdir(parents=True)
    (tmp_path / "docs" / "design" / "sbbf.md").write_text("# SBBF\n", encoding="utf-8")
    page = tmp_path / "data" / "README.md"
    page.parent.mkdir()
    page.write_text("# Data\n\nThe byte rules are in `docs/sbbf.md`\n(see [the SBBF](../docs/design/sbbf.md)).\n",
                    encoding="utf-8")
    assert missing_references(page, root=tmp_path, scala_names=set()) == ["data/README.md:3: docs/sbbf.md"]


@pytest.mark.parametrize("text", ["# set up, then run bench/NAME.py", "# see docs/NAME.md"])
def test_placeholders_are_not_files(text: str, tmp_path: Path):
    source = tmp_path / "run.sh"
    source.write_text(text + "\n", encoding="utf-8")
    assert missing_references(source, root=tmp_path, scala_names=set()) == []
