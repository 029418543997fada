"""Deal codes and the version-1 shuffle (SPEC 1.8).

`RU1-<rule>-<seed>`: the rule letter `C` (classic) or `R` (relaxed), and the seed as 7 letters
A-Z, a base-26 number with the most significant letter first (`AAAAABB` = 27).
"""

from __future__ import annotations

import enum
import random
from dataclasses import dataclass
from typing import Final

from server.engine.errors import NotationError

SEED_LETTERS: Final = 7
SEED_LIMIT: Final = 26**SEED_LETTERS
_MASK: Final = (1 << 64) - 1


class Rule(enum.StrEnum):
    """The tableau rule of a game (SPEC 1.3)."""

    CLASSIC = "classic"
    RELAXED = "relaxed"

    @property
    def letter(self) -> str:
        return "C" if self is Rule.CLASSIC else "R"


def seed_letters(n: int) -> str:
    """The 7-letter form of seed `n` (0 <= n < 26**7)."""
    if not 0 <= n < SEED_LIMIT:
        raise NotationError("seed", n, f"a seed is a number from 0 to {SEED_LIMIT - 1}")
    out = []
    for _ in range(SEED_LETTERS):
        n, digit = divmod(n, 26)
        out.append(chr(65 + digit))
    return "".join(reversed(out))


def seed_number(letters: str) -> int:
    """The number of a 7-letter seed (case-insensitive)."""
    if (
        not isinstance(letters, str)
        or len(letters) != SEED_LETTERS
        or not letters.isascii()
        or not letters.isalpha()
    ):
        raise NotationError("seed", letters, "a seed is exactly 7 letters A-Z")
    n = 0
    for ch in letters.upper():
        n = n * 26 + (ord(ch) - 65)
    return n


@dataclass(frozen=True, slots=True)
class DealCode:
    """A deal code: `DealCode.parse("ru1-c-aaaaabb")`, `str(code) == "RU1-C-AAAAABB"`."""

    rule: Rule
    seed: int

    def __post_init__(self) -> None:
        if not 0 <= self.seed < SEED_LIMIT:
            raise NotationError("seed", self.seed, f"a seed is a number from 0 to {SEED_LIMIT - 1}")

    @classmethod
    def parse(cls, text: str) -> DealCode:
        if not isinstance(text, str):
            raise NotationError("deal code", text, "a deal code is text such as RU1-C-AAAAABB")
        if not text.isascii():
            raise NotationError("deal code", text, "a deal code is ASCII text: RU1-<C|R>-<A-Z x7>")
        parts = text.upper().split("-")
        if len(parts) != 3 or parts[0] != "RU1":
            raise NotationError(
                "deal code", text, "expected RU1-<C|R>-<7 letters>, such as RU1-C-AAAAABB"
            )
        if parts[1] not in ("C", "R"):
            raise NotationError(
                "deal code", text, "the rule letter must be C (classic) or R (relaxed)"
            )
        try:
            seed = seed_number(parts[2])
        except NotationError:
            raise NotationError(
                "deal code", text, "the seed must be exactly 7 letters A-Z"
            ) from None
        return cls(Rule.CLASSIC if parts[1] == "C" else Rule.RELAXED, seed)

    @classmethod
    def random(cls, rule: Rule, rng: random.Random) -> DealCode:
        """A uniformly random code; the caller owns the randomness."""
        return cls(rule, rng.randrange(SEED_LIMIT))

    def with_rule(self, rule: Rule) -> DealCode:
        return DealCode(rule, self.seed)

    def __str__(self) -> str:
        return f"RU1-{self.rule.letter}-{seed_letters(self.seed)}"

    def __repr__(self) -> str:
        return f"DealCode.parse({str(self)!r})"


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


COLUMN_SIZES: Final = (1, 6, 7, 8, 9, 10, 11)
FACE_DOWN: Final = (0, 1, 2, 3, 4, 5, 6)


def deal_columns(seed: int) -> list[list[int]]:
    """The 7 columns of a deal, each bottom first (the lowest `FACE_DOWN[c]` face-down)."""
    deck = shuffled_deck(seed)
    columns = []
    start = 0
    for size in COLUMN_SIZES:
        columns.append(deck[start : start + size])
        start += size
    return columns
