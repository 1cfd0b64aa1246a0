"""The documentation's links: every relative link of every Markdown file of the repository leads somewhere.

Pure Python, no Spark. A link to a file must name a file of the repository; a
link with `#anchor` must name a heading of that file, spelled as GitHub makes
heading anchors. Links to web addresses are not followed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from test_code_references import repository_files

ROOT = Path(__file__).resolve().parent.parent
# Every Markdown file: README.md, docs/, and the READMEs beside tests' data (tests/vectors/...).
PAGES = sorted(p for p in repository_files(ROOT) if p.suffix == ".md")

_FENCE = re.compile(r"^(```|~~~)")
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
_EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")  # http:, https:, mailto:, ...


def _prose_lines(page: Path) -> list[str]:
    """The page's lines outside fenced code blocks (a link or a heading in code is not one)."""
    lines, in_code = [], False
    for line in page.read_text(encoding="utf-8").splitlines():
        if _FENCE.match(line.strip()):
            in_code = not in_code
            continue
        if not in_code:
            lines.append(line)
    return lines


def _without_inline_code(line: str) -> str:
    return re.sub(r"`[^`]*`", "", line)


def anchor_of(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading keeps its text
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every heading anchor of a page, with GitHub's -1, -2 suffixes for repeated headings."""
    seen: dict[str, int] = {}
    result = set()
    for line in _prose_lines(page):
        match = _HEADING.match(line)
        if not match:
            continue
        base = anchor_of(match.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        result.add(base if count == 0 else f"{base}-{count}")
    return result


def links(page: Path) -> list[str]:
    return [m.group(1) for line in _prose_lines(page) for m in _LINK.finditer(_without_inline_code(line))]


def broken_links(page: Path, root: Path = ROOT) -> list[str]:
    """Each relative link of `page` whose file or heading does not exist, with the reason (paths from `root`)."""
    broken = []
    for target in links(page):
        if _EXTERNAL.match(target):
            continue
        path_part, _, anchor = target.partition("#")
        linked = (page.parent / path_part).resolve() if path_part else page
        if not linked.exists():
            broken.append(f"{target}: no file {linked.relative_to(root) if linked.is_relative_to(root) else linked}")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target}: no heading with anchor #{anchor} in {linked.relative_to(root)}")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_relative_link_leads_to_a_file_and_heading_that_exist(page: Path):
    assert broken_links(page) == []


def test_the_guide_the_design_notes_and_the_other_readmes_are_there():
    """The checks above must have pages to check: the guide's index, a design note, and the Markdown outside docs/."""
    outside_docs = {ROOT / "README.md", ROOT / "tests" / "vectors" / "README.md"}
    assert {ROOT / "docs" / "README.md", *outside_docs} <= set(PAGES)
    assert any(p.parent.name == "design" for p in PAGES)


def test_anchors_follow_githubs_rules():
    assert anchor_of("IN-lists and the false-positive rate") == "in-lists-and-the-false-positive-rate"
    assert anchor_of("Delta changes: why the commit files are read") == "delta-changes-why-the-commit-files-are-read"
    assert anchor_of("The system path on shared storage") == "the-system-path-on-shared-storage"
    assert anchor_of("Staleness (`index(name).staleness`)") == "staleness-indexnamestaleness"
    assert anchor_of("TPC-H") == "tpc-h"


def test_a_broken_link_is_found(tmp_path: Path):
    """The check itself can fail: a missing file and a missing heading are both reported."""
    page = tmp_path / "page.md"
    (tmp_path / "other.md").write_text("# Other\n\n## A heading\n", encoding="utf-8")
    page.write_text(
        "[ok](other.md#a-heading) [missing](nowhere.md) [bad anchor](other.md#no-such)\n"
        "```\n[in code](ignored.md)\n```\n`[inline](ignored.md)` [web](https://example.org/x.md)\n",
        encoding="utf-8",
    )
    assert broken_links(page, root=tmp_path) == [
        "nowhere.md: no file nowhere.md",
        "other.md#no-such: no heading with anchor #no-such in other.md",
    ]
