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
    **dict.fromkeys("0123456789", 7.0),
    " ": 3.9,
    "!": 4.3,
    '"': 5.1,
    "#": 9.2,
    "$": 7.0,
    "%": 11.9,
    "&": 8.0,
    "'": 3.0,
    "(": 4.9,
    ")": 4.9,
    "*": 7.0,
    "+": 9.2,
    ",": 4.0,
    "-": 5.0,
    ".": 4.0,
    "/": 4.9,
    ":": 4.9,
    ";": 4.9,
    "<": 9.2,
    "=": 9.2,
    ">": 9.2,
    "?": 6.0,
    "@": 11.0,
    "[": 4.9,
    "\\": 4.9,
    "]": 4.9,
    "_": 7.0,
    "|": 4.9,
    "a": 6.7,
    "b": 6.8,
    "c": 5.8,
    "d": 6.8,
    "e": 6.6,
    "f": 3.9,
    "g": 6.8,
    "h": 7.0,
    "i": 3.0,
    "j": 3.8,
    "k": 6.5,
    "l": 3.0,
    "m": 10.7,
    "n": 7.0,
    "o": 6.7,
    "p": 6.8,
    "q": 6.8,
    "r": 4.7,
    "s": 5.7,
    "t": 4.3,
    "u": 7.0,
    "v": 6.5,
    "w": 9.0,
    "x": 6.5,
    "y": 6.5,
    "z": 5.8,
    "A": 7.5,
    "B": 7.6,
    "C": 7.7,
    "D": 8.5,
    "E": 7.0,
    "F": 6.3,
    "G": 8.5,
    "H": 8.3,
    "I": 4.6,
    "J": 5.0,
    "K": 7.6,
    "L": 6.1,
    "M": 9.3,
    "N": 8.2,
    "O": 8.7,
    "P": 6.6,
    "Q": 8.7,
    "R": 7.7,
    "S": 7.5,
    "T": 6.8,
    "U": 8.1,
    "V": 7.5,
    "W": 10.9,
    "X": 7.5,
    "Y": 6.8,
    "Z": 7.5,
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
