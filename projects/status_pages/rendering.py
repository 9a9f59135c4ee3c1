"""A status page's HTML, gzipped as it is written.

The template lays out the page around its projects' lines, which are
most of it: a 90-day page of 500 projects is 45,000 cells, 3 MB. Passed
through the template, those lines were joined into one string that was
copied again at each level of the template, then encoded and compressed
in one piece, at about 10 ms a megabyte. Instead the template marks where
each section's lines go, and every line is encoded and compressed from
its own string, in place.
"""

from __future__ import annotations

import secrets
import zlib

from django.template.loader import render_to_string
from django.utils.safestring import mark_safe

from projects.models import StatusPage
from projects.status_pages.content import PageContent

# Fast, and the cells repeat so much that more effort gains little.
GZIP_LEVEL = 3
GZIP_FORMAT = 16 + zlib.MAX_WBITS  # a gzip header and trailer, as gzip.compress


def gzipped_page(page: StatusPage, content: PageContent, base: str) -> bytes:
    # A fresh token: no text on the page can contain the mark by chance
    # or on purpose.
    mark = f"<!--rows {secrets.token_hex(8)}-->"
    html = render_to_string(
        "status_pages/page.html",
        {"page": page, "content": content, "base": base, "rows_here": mark_safe(mark)},
    )
    around = html.split(mark)
    if len(around) != len(content.sections) + 1:
        raise ValueError("status_pages/page.html must mark each section's rows once")
    packer = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, GZIP_FORMAT)
    chunks = [packer.compress(around[0].encode())]
    for section, after in zip(content.sections, around[1:], strict=True):
        chunks += [packer.compress(row.html.encode()) for row in section.rows]
        chunks.append(packer.compress(after.encode()))
    chunks.append(packer.flush())
    return b"".join(chunks)
