"""Player names: what a name may be, and the key two names share when they look the same.

A name is stored NFC-normalized with its surrounding white space stripped. It is refused when:

- it holds a character that is not printable: a control, format (zero-width spaces and joiners,
  bidirectional marks, ...), surrogate, private-use or unassigned character, or white space
  other than the plain space (invisible separators included);
- it holds a character that prints as nothing: the Hangul fillers U+115F, U+1160, U+3164,
  U+FFA0, the braille blank U+2800, the combining grapheme joiner U+034F, the Khmer inherent
  vowels U+17B4 and U+17B5;
- nothing visible is left once spaces are taken away (a blank-looking name);
- it starts with a combining mark (or one follows a space), or stacks more than `MAX_MARKS`
  combining marks on one character (counted decomposed: "ệ" is e with two);
- it has more than `MAX_VISIBLE` visible characters (combining marks are not counted: "é"
  written as e + U+0301 is one) or more than `MAX_CODE_POINTS` code points in all.

Two players never share a name's key (`name_key`): the name folded to compatibility form
(NFKC) and case (casefold), without default-ignorable characters such as variation selectors,
and with runs of spaces made one. So "Ana", "ANA", fullwidth "Ana" and "Ana" + U+FE0F are the same
name, and so are "é" and "e" + U+0301. Players are never deleted, so every player counts.
"""

from __future__ import annotations

import unicodedata

MAX_VISIBLE = 32
MAX_CODE_POINTS = 64
MAX_MARKS = 3
MAX_KEY = 256
"""The most code points of a name's key (compatibility forms can spell one character as many)."""

INVISIBLE = frozenset("\u115f\u1160\u3164\uffa0\u2800\u034f\u17b4\u17b5")
"""Characters that are printable to Python but print as nothing."""


def _is_mark(char: str) -> bool:
    return unicodedata.category(char).startswith("M")


def _ignorable(char: str) -> bool:
    """Default-ignorable code points that may remain in a valid name (variation selectors and
    the like, all of them combining marks): they change nothing a reader sees."""
    code = ord(char)
    return (
        char in INVISIBLE
        or 0xFE00 <= code <= 0xFE0F
        or 0xE0100 <= code <= 0xE01EF
        or 0x180B <= code <= 0x180F
        or unicodedata.category(char) == "Cf"
    )


def checked_name(raw: str) -> str:
    """The name to store for `raw` (NFC, stripped), or ValueError saying what is wrong."""
    name = unicodedata.normalize("NFC", raw).strip()
    if len(name) > MAX_CODE_POINTS:
        raise ValueError(f"the name is longer than {MAX_CODE_POINTS} code points")
    for char in name:
        if not char.isprintable() or char in INVISIBLE:
            raise ValueError(
                f"the name holds an invisible or control character (U+{ord(char):04X})"
            )
    if not any(not char.isspace() and not _is_mark(char) for char in name):
        raise ValueError("the name is blank: it has no visible character")
    marks = 0
    decomposed = unicodedata.normalize("NFD", name)  # "ệ" is e and two marks
    for index, char in enumerate(decomposed):
        if not _is_mark(char):
            marks = 0
            continue
        if index == 0 or decomposed[index - 1].isspace():
            raise ValueError("a combining mark in the name follows no letter")
        marks += 1
        if marks > MAX_MARKS:
            raise ValueError(
                f"the name stacks more than {MAX_MARKS} combining marks on one character"
            )
    visible = sum(1 for char in name if not _is_mark(char))
    if visible > MAX_VISIBLE:
        raise ValueError(f"the name is longer than {MAX_VISIBLE} characters")
    if len(name_key(name)) > MAX_KEY:
        raise ValueError("the name is too long once its compatibility characters are spelled out")
    return name


def name_key(name: str) -> str:
    """The key that two names that read the same share (see the module's docstring)."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())
    kept = "".join(char for char in folded if not _ignorable(char))
    return " ".join(kept.split())
