"""The README stays a front door and the manual stays findable: the README
under 10 KB with its screenshots, every manual page in the index, and every
page opening with a paragraph that says what it is for."""

from __future__ import annotations

from pathlib import Path

from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
MANUAL = sorted(p for p in DOCS.glob("*.md") if p.name != "README.md")
README_LIMIT_BYTES = 10_000


def first_blocks(path: Path) -> list[str]:
    """The types of a page's first two blocks, e.g. ["heading", "paragraph"]."""
    tokens = MarkdownIt("commonmark").parse(path.read_text())
    opening = [t.type for t in tokens if t.level == 0 and t.nesting != -1]
    return [kind.removesuffix("_open") for kind in opening[:2]]


def test_the_readme_is_at_most_10_kb():
    assert len((ROOT / "README.md").read_bytes()) <= README_LIMIT_BYTES


def test_the_readme_shows_the_screenshots_and_the_two_commands():
    readme = (ROOT / "README.md").read_text()
    for image in ("docs/images/dashboard.png", "docs/images/project.png"):
        assert f"]({image})" in readme
        assert (ROOT / image).stat().st_size > 10_000
    assert "make run " in readme
    assert "make test " in readme


def test_every_manual_page_is_in_the_index():
    index = (DOCS / "README.md").read_text()
    missing = [p.name for p in MANUAL if f"]({p.name})" not in index]
    assert missing == []


def test_every_page_opens_with_what_it_is_for():
    pages = [ROOT / "README.md", DOCS / "README.md", *MANUAL]
    wrong = {
        p.relative_to(ROOT).as_posix(): first_blocks(p)
        for p in pages
        if first_blocks(p) != ["heading", "paragraph"]
    }
    assert wrong == {}
