"""Badges in the shields.io "flat" style, drawn without a font: text
widths come from a table of Verdana 11 px advance widths (the font
shields.io measures with), so a badge is sized the same everywhere.

A badge is an image with a name: role="img", a <title> and an aria-label
give screen readers "label: message"; the drawn text is hidden from them.
"""

from __future__ import annotations

from django.utils.html import escape

# Verdana at 11 px: advance widths in pixels, rounded to a tenth.
_WIDTHS = {
    char: width
    for width, chars in {
        3.0: "'il",
        3.8: "j",
        3.9: " f",
        4.0: ",.",
        4.3: "!t",
        4.6: "I",
        4.7: "r",
        4.9: "()/:;[\\]|",
        5.0: "-J",
        5.1: '"',
        5.7: "s",
        5.8: "cz",
        6.0: "?",
        6.1: "L",
        6.3: "F",
        6.5: "kvxy",
        6.6: "eP",
        6.7: "ao",
        6.8: "bdgpqTY",
        7.0: "0123456789$*_hnuE",
        7.5: "ASVXZ",
        7.6: "BK",
        7.7: "CR",
        8.0: "&",
        8.1: "U",
        8.2: "N",
        8.3: "H",
        8.5: "DG",
        8.7: "OQ",
        9.0: "w",
        9.2: "#+<=>",
        9.3: "M",
        10.7: "m",
        10.9: "W",
        11.0: "@",
        11.9: "%",
    }.items()
    for char in chars
}
# Anything else (accents, CJK, symbols) is taken as wide as an "m" is
# narrow: a badge a little too wide reads better than one that clips.
_OTHER = 8.0
_PADDING = 10

COLORS = {
    "brightgreen": "#4c1",
    "green": "#97ca00",
    "yellowgreen": "#a4a61d",
    "yellow": "#dfb317",
    "orange": "#fe7d37",
    "red": "#e05d44",
    "blue": "#007ec6",
    "lightgrey": "#9f9f9f",
}


def text_width(text: str) -> float:
    return sum(_WIDTHS.get(char, _OTHER) for char in text)


def badge(label: str, message: str, color: str) -> str:
    """The SVG of a badge; `color` is one of COLORS' names."""
    left = round(text_width(label) + _PADDING)
    right = round(text_width(message) + _PADDING)
    total = left + right
    fill = COLORS.get(color, COLORS["lightgrey"])
    name = escape(f"{label}: {message}")
    label, message = escape(label), escape(message)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{total}" height="20" '
        f'role="img" aria-label="{name}"><title>{name}</title>'
        '<linearGradient id="s" x2="0" y2="100%">'
        '<stop offset="0" stop-color="#bbb" stop-opacity=".1"/>'
        '<stop offset="1" stop-opacity=".1"/></linearGradient>'
        f'<clipPath id="r"><rect width="{total}" height="20" rx="3" fill="#fff"/>'
        '</clipPath><g clip-path="url(#r)">'
        f'<rect width="{left}" height="20" fill="#555"/>'
        f'<rect x="{left}" width="{right}" height="20" fill="{fill}"/>'
        f'<rect width="{total}" height="20" fill="url(#s)"/></g>'
        '<g fill="#fff" text-anchor="middle" aria-hidden="true" '
        'font-family="Verdana,Geneva,DejaVu Sans,sans-serif" '
        'text-rendering="geometricPrecision" font-size="110">'
        f"{_text(label, left / 2, left - _PADDING)}"
        f"{_text(message, left + right / 2, right - _PADDING)}"
        "</g></svg>"
    )


def _text(text: str, middle: float, width: float) -> str:
    # Drawn at ten times the size and scaled down, as shields.io does, so
    # the position keeps a tenth of a pixel; textLength fits it exactly.
    x, length = round(middle * 10), round(width * 10)
    return (
        f'<text x="{x}" y="150" fill="#010101" fill-opacity=".3" '
        f'transform="scale(.1)" textLength="{length}">{text}</text>'
        f'<text x="{x}" y="140" transform="scale(.1)" '
        f'textLength="{length}">{text}</text>'
    )
