"""Deal codes and their shuffles (SPEC 1.8 and 1.8.1).

`RU1-<rule>-<seed>`: the rule letter `C` (classic) or `R` (relaxed), and the seed as 7 letters
A-Z, a base-26 number with the most significant letter first (`AAAAABB` = 27).

`RU2-<rule>-<seed>`: the same rule letter, and a 128-bit seed as 28 letters A-Z in four groups
of seven joined by dashes (`RU2-C-AAAAAAA-AAAAAAA-AAAAAAA-AAAAABB` = 27). Its deck comes from a
SHA-256 stream, so the face-up cards of a deal do not give away its seed; the server deals these
itself and publishes only the commitment (the SHA-256 of the code) until the code is revealed.
"""

from __future__ import annotations

import enum
import hashlib
import itertools
import random
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Final

from server.engine.errors import NotationError

SEED_LETTERS: Final = 7
SEED_LIMIT: Final = 26**SEED_LETTERS
_MASK: Final = (1 << 64) - 1

VERSIONS: Final = (1, 2)
RU2_SEED_GROUPS: Final = 4
RU2_SEED_LETTERS: Final = RU2_SEED_GROUPS * SEED_LETTERS
RU2_SEED_LIMIT: Final = 2**128
_WORD: Final = 2**64
_BLOCK_WORDS: Final = struct.Struct(">4Q")

RU1_FORM: Final = "RU1-<C|R>-<7 letters>, such as RU1-C-AAAAABB"
RU2_FORM: Final = (
    "RU2-<C|R>-<7 letters>-<7 letters>-<7 letters>-<7 letters>, "
    "such as RU2-C-BERLRID-EACHOVY-RCYGGPY-KCNLGTT"
)


class Rule(enum.StrEnum):
    """The tableau rule of a game (SPEC 1.3)."""

    CLASSIC = "classic"
    RELAXED = "relaxed"

    @property
    def letter(self) -> str:
        return "C" if self is Rule.CLASSIC else "R"


def _letters(n: int, count: int) -> str:
    """`n` as `count` base-26 letters A-Z, most significant first (the caller checks range)."""
    out = []
    for _ in range(count):
        n, digit = divmod(n, 26)
        out.append(chr(65 + digit))
    return "".join(reversed(out))


def _is_letters(text: str, count: int) -> bool:
    return len(text) == count and text.isascii() and text.isalpha()


def _number(letters: str) -> int:
    """The number of ASCII letters A-Z / a-z in base 26 (the caller checks the letters)."""
    n = 0
    for ch in letters.upper():
        n = n * 26 + (ord(ch) - 65)
    return n


def seed_letters(n: int) -> str:
    """The 7-letter form of an RU1 seed `n` (0 <= n < 26**7)."""
    if not 0 <= n < SEED_LIMIT:
        raise NotationError("seed", n, f"a seed is a number from 0 to {SEED_LIMIT - 1}")
    return _letters(n, SEED_LETTERS)


def seed_number(letters: str) -> int:
    """The number of a 7-letter RU1 seed (case-insensitive)."""
    if not isinstance(letters, str) or not _is_letters(letters, SEED_LETTERS):
        raise NotationError("seed", letters, "a seed is exactly 7 letters A-Z")
    return _number(letters)


def seed_groups_ru2(n: int) -> str:
    """The printed form of an RU2 seed `n` (0 <= n < 2**128): four groups of 7 letters joined
    by dashes, such as `AAAAAAA-AAAAAAA-AAAAAAA-AAAAABB` for 27."""
    if not 0 <= n < RU2_SEED_LIMIT:
        raise NotationError(
            "seed", n, "an RU2 seed is a number from 0 to 2**128 - 1 (2**128 and above refused)"
        )
    letters = _letters(n, RU2_SEED_LETTERS)
    return "-".join(letters[i : i + SEED_LETTERS] for i in range(0, RU2_SEED_LETTERS, SEED_LETTERS))


RU2_SEED_MAX_TEXT: Final = seed_groups_ru2(RU2_SEED_LIMIT - 1)


def _check_seed(seed: object, version: object) -> None:
    if not isinstance(version, int) or isinstance(version, bool) or version not in VERSIONS:
        raise NotationError(
            "deal code version", version, "the version of a deal code is 1 (RU1) or 2 (RU2)"
        )
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise NotationError("seed", seed, "a seed is a whole number")
    if version == 1 and not 0 <= seed < SEED_LIMIT:
        raise NotationError("seed", seed, f"an RU1 seed is a number from 0 to {SEED_LIMIT - 1}")
    if version == 2 and not 0 <= seed < RU2_SEED_LIMIT:
        raise NotationError(
            "seed",
            seed,
            "an RU2 seed is a number from 0 to 2**128 - 1 (2**128 and above are refused)",
        )


@dataclass(frozen=True, slots=True)
class DealCode:
    """A deal code.

    `DealCode(rule, seed)` is an RU1 code (`DealCode.parse("ru1-c-aaaaabb")`,
    `str(code) == "RU1-C-AAAAABB"`); `DealCode(rule, seed, 2)` an RU2 code with a seed below
    2**128. `deck()` and `columns()` deal it by the shuffle of its version; `commitment` is the
    SHA-256 of its printed text.
    """

    rule: Rule
    seed: int
    version: int = 1

    def __post_init__(self) -> None:
        _check_seed(self.seed, self.version)

    @classmethod
    def parse(cls, text: str) -> DealCode:
        """An RU1 or RU2 code from its text (case-insensitive); `NotationError` otherwise."""
        if not isinstance(text, str):
            raise NotationError(
                "deal code", text, "a deal code is text such as RU1-C-AAAAABB or " + RU2_FORM
            )
        if not text.isascii():
            raise NotationError(
                "deal code",
                text,
                "a deal code is ASCII text: RU1-<C|R>-<7 letters A-Z> "
                "or RU2-<C|R>-<four groups of 7 letters A-Z>",
            )
        parts = text.split("-")
        head = parts[0].upper()
        if head == "RU1":
            return cls._parse_ru1(text, parts)
        if head == "RU2":
            return cls._parse_ru2(text, parts)
        if head.startswith("RU2"):
            raise NotationError(
                "deal code",
                text,
                "the parts of an RU2 code are joined by dashes (other separators and codes "
                "without their dashes are refused): expected " + RU2_FORM,
            )
        if len(head) > 2 and head.startswith("RU") and head[2:].isdigit():
            raise NotationError(
                "deal code",
                text,
                f"unknown deal code version {head}: the versions are RU1 and RU2",
            )
        raise NotationError("deal code", text, f"expected {RU1_FORM}, or {RU2_FORM}")

    @classmethod
    def _rule(cls, text: str, letter: str) -> Rule:
        upper = letter.upper()
        if upper not in ("C", "R"):
            raise NotationError(
                "deal code", text, "the rule letter must be C (classic) or R (relaxed)"
            )
        return Rule.CLASSIC if upper == "C" else Rule.RELAXED

    @classmethod
    def _parse_ru1(cls, text: str, parts: list[str]) -> DealCode:
        if len(parts) != 3:
            raise NotationError("deal code", text, f"expected {RU1_FORM}")
        rule = cls._rule(text, parts[1])
        if not _is_letters(parts[2], SEED_LETTERS):
            raise NotationError("deal code", text, "the seed must be exactly 7 letters A-Z")
        return cls(rule, _number(parts[2]))

    @classmethod
    def _parse_ru2(cls, text: str, parts: list[str]) -> DealCode:
        if len(parts) != 2 + RU2_SEED_GROUPS:
            if len(parts) == 3 and _is_letters(parts[2], RU2_SEED_LETTERS):
                reason = "the seed's four groups of 7 letters must be joined by dashes"
            else:
                reason = "an RU2 seed is four groups of 7 letters A-Z joined by dashes"
            raise NotationError("deal code", text, f"{reason}: expected {RU2_FORM}")
        rule = cls._rule(text, parts[1])
        groups = parts[2:]
        for index, group in enumerate(groups, 1):
            if not _is_letters(group, SEED_LETTERS):
                what = f"{group!r} ({len(group)} characters)" if group else "empty"
                raise NotationError(
                    "deal code",
                    text,
                    f"group {index} of the seed is {what}: each group is exactly 7 letters A-Z; "
                    f"expected {RU2_FORM}",
                )
        seed = _number("".join(groups))
        if seed >= RU2_SEED_LIMIT:
            raise NotationError(
                "deal code",
                text,
                "the seed is too large: an RU2 seed must be below 2**128 "
                f"(the largest is {RU2_SEED_MAX_TEXT})",
            )
        return cls(rule, seed, 2)

    @classmethod
    def random(cls, rule: Rule, rng: random.Random) -> DealCode:
        """A uniformly random RU1 code; the caller owns the randomness."""
        return cls(rule, rng.randrange(SEED_LIMIT))

    def with_rule(self, rule: Rule) -> DealCode:
        """The same seed and version under `rule` (the same cards are dealt)."""
        return DealCode(rule, self.seed, self.version)

    def deck(self) -> list[int]:
        """The shuffled deck of this code's version, index 0 first."""
        if self.version == 2:
            return shuffled_deck_ru2(self.seed)
        return shuffled_deck(self.seed)

    def columns(self) -> list[list[int]]:
        """The 7 columns of this code's deal, each bottom first (the lowest `FACE_DOWN[c]`
        face-down)."""
        return columns_of(self.deck())

    @property
    def commitment(self) -> str:
        """The lower-case hex SHA-256 of the printed code (ASCII, upper case, with dashes)."""
        return hashlib.sha256(str(self).encode("ascii")).hexdigest()

    def __str__(self) -> str:
        if self.version == 2:
            return f"RU2-{self.rule.letter}-{seed_groups_ru2(self.seed)}"
        return f"RU1-{self.rule.letter}-{seed_letters(self.seed)}"

    def __repr__(self) -> str:
        return f"DealCode.parse({str(self)!r})"


def commitment(code: DealCode | str) -> str:
    """The commitment of a code or of a code's text (parsed, so any case gives the same):
    the lower-case hex SHA-256 of the printed code."""
    return (DealCode.parse(code) if isinstance(code, str) else code).commitment


def splitmix64(state: int) -> tuple[int, int]:
    """One SplitMix64 draw: returns (new state, output)."""
    state = (state + 0x9E3779B97F4A7C15) & _MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return state, z ^ (z >> 31)


def shuffled_deck(seed: int) -> list[int]:
    """The version-1 shuffle: Fisher-Yates over the ordered deck driven by SplitMix64(seed)."""
    deck = list(range(52))
    state = seed & _MASK
    for i in range(51, 0, -1):
        state, r = splitmix64(state)
        j = r % (i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def ru2_words(seed: int) -> Iterator[int]:
    """The version-2 stream of 64-bit words: block k is SHA-256(b"RU2" + seed as 16 bytes
    big-endian + k as 4 bytes big-endian), read as four big-endian words in order."""
    prefix = b"RU2" + seed.to_bytes(16, "big")
    for k in itertools.count():
        yield from _BLOCK_WORDS.unpack(hashlib.sha256(prefix + k.to_bytes(4, "big")).digest())


def ru2_shuffle(words: Iterable[int]) -> list[int]:
    """Fisher-Yates over the ordered deck, unbiased: for i from 51 down to 1 with
    bound = i + 1, words x >= 2**64 - (2**64 mod bound) are skipped; j = x mod bound."""
    stream = iter(words)
    deck = list(range(52))
    for i in range(51, 0, -1):
        bound = i + 1
        limit = _WORD - _WORD % bound
        x = next(stream)
        while x >= limit:
            x = next(stream)
        j = x % bound
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def shuffled_deck_ru2(seed: int) -> list[int]:
    """The version-2 shuffle of a seed 0 <= seed < 2**128 (SPEC 1.8.1)."""
    if not 0 <= seed < RU2_SEED_LIMIT:
        raise NotationError("seed", seed, "an RU2 seed is a number from 0 to 2**128 - 1")
    return ru2_shuffle(ru2_words(seed))


COLUMN_SIZES: Final = (1, 6, 7, 8, 9, 10, 11)
FACE_DOWN: Final = (0, 1, 2, 3, 4, 5, 6)


def columns_of(deck: list[int]) -> list[list[int]]:
    """A shuffled deck dealt into the 7 columns, column by column, each bottom first."""
    columns = []
    start = 0
    for size in COLUMN_SIZES:
        columns.append(deck[start : start + size])
        start += size
    return columns


def deal_columns(seed: int) -> list[list[int]]:
    """The 7 columns of an RU1 deal, each bottom first (the lowest `FACE_DOWN[c]` face-down)."""
    return columns_of(shuffled_deck(seed))
