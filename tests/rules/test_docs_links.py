"""Every relative link and anchor in README.md and docs/ leads somewhere.

Links are read with markdown-it (CommonMark), so a link inside code is no
link; anchors are matched against the headings of the page they name,
slugged the way GitHub does (lowercase, punctuation dropped, spaces to
hyphens, "-1", "-2" ... for repeats), and against explicit id/name
attributes in HTML.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from urllib.parse import unquote

import pytest
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
_HTML_ID = re.compile(r"""<[^>]+\b(?:id|name)=["']([^"']+)["']""")
_HTML_LINK = re.compile(r"""<(?:a|img)\b[^>]*\b(?:href|src)=["']([^"']+)["']""")


def github_slug(text: str) -> str:
    """A heading's anchor as GitHub makes it (github-slugger)."""
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def _tokens(path: Path):
    return MarkdownIt("commonmark").enable("table").parse(path.read_text())


@cache
def anchors(path: Path) -> frozenset[str]:
    seen: dict[str, int] = {}
    found = set()
    tokens = _tokens(path)
    for index, token in enumerate(tokens):
        if token.type == "heading_open":
            inline = tokens[index + 1]
            text = "".join(
                child.content
                for child in inline.children or []
                if child.type in ("text", "code_inline")
            )
            slug = github_slug(text)
            repeat = seen.get(slug, 0)
            seen[slug] = repeat + 1
            found.add(slug if repeat == 0 else f"{slug}-{repeat}")
        if token.type in ("html_block", "html_inline", "inline"):
            found.update(_HTML_ID.findall(token.content))
    return frozenset(found)


def links(path: Path) -> Iterator[str]:
    """The targets of every link and image on a page, HTML ones included."""

    def walk(tokens):
        for token in tokens:
            if token.type == "link_open":
                yield token.attrs["href"]
            elif token.type == "image":
                yield token.attrs["src"]
            elif token.type in ("html_block", "html_inline"):
                yield from _HTML_LINK.findall(token.content)
            if token.children:
                yield from walk(token.children)

    yield from walk(_tokens(path))


def broken_links(path: Path, *, root: Path = ROOT) -> list[str]:
    broken = []
    for target in links(path):
        if _SCHEME.match(target) or target.startswith("//"):
            continue  # another site: not ours to check offline
        address, _, anchor = target.partition("#")
        linked = (path.parent / unquote(address)).resolve() if address else path
        if not linked.exists():
            broken.append(f"{target}: no file {linked.relative_to(root)}")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target}: no heading #{anchor} in {linked.name}")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_and_anchor_leads_somewhere(page):
    assert broken_links(page) == []


def test_the_manual_is_there_to_check():
    names = {p.relative_to(ROOT).as_posix() for p in PAGES}
    assert {"README.md", "docs/README.md", "docs/configuration.md"} <= names


@pytest.mark.parametrize(
    ("heading", "slug"),
    [
        ("Several pollers (PostgreSQL)", "several-pollers-postgresql"),
        ("Sizing `MAX_CONCURRENT_HTTP`", "sizing-max_concurrent_http"),
        ("Storms: digests", "storms-digests"),
        ("What limited it, and what changed", "what-limited-it-and-what-changed"),
        ("Bytes per poll, 2026-11-24: a key", "bytes-per-poll-2026-11-24-a-key"),
    ],
)
def test_slugs_follow_githubs_rules(heading, slug):
    assert github_slug(heading) == slug


def test_a_broken_link_and_a_missing_anchor_are_reported(tmp_path):
    (tmp_path / "other.md").write_text("# Other page\n\n## Two words\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# Title\n\n"
        "[fine](other.md#two-words) [fine too](#title) [web](https://example.com/x)\n"
        "[gone](missing.md) [no anchor](other.md#three-words) [here](#nowhere)\n"
        "`[in code](missing-too.md)`\n"
    )
    broken = [line.split(":")[0] for line in broken_links(page, root=tmp_path)]
    assert broken == ["missing.md", "other.md#three-words", "#nowhere"]
