"""The state of one game and the rules that change it (SPEC 1.2-1.7).

`Game` is a mutable state with an undo history. `refusal()` is the one function that decides
whether a move is legal (it returns the rule id that forbids it, or None); `play()`, `targets()`,
`legal_moves()`, `resolve_tap()` and `resolve_double_tap()` all derive from it.

Representation (chosen for speed; see bench/engine.py):
- `columns[c]` is a list of card ints, bottom first; its lowest `down[c]` cards are face-down.
  Face-down cards only ever sit below face-up ones, and the last card of a non-empty column is
  always face-up (the flip is part of the move that uncovers it).
- `foundations[s]` is how many cards of suit `s` (S, H, D, C) lie on its foundation; they are
  always that suit's ace up to rank `foundations[s] - 1`.
- `where[card]` is the column 0..6 that holds the card, or `FOUNDATION` when it is on its
  foundation; `hidden[card]` says whether it is face-down (derived from `down`, kept in step).
- `reached` is a 52-bit set (bit `1 << card`) of the cards that have reached their foundation at
  least once in the current line of play: every card on a foundation, and the cards that were
  taken back off it since. An undo of the move that first put a card there removes it again.
- `ranked_score` (SPEC 1.5) is 10 for each card in `reached` plus 5 for each card turned
  face-up: always `10 * reached.bit_count() + 5 * (21 - sum(down))`, kept in step by `apply()`
  and `undo()` so that reading it costs nothing. A position played from a deal has at most 21
  face-down cards, so its ranked score lies between 0 and `WIN_SCORE` (and never above the
  score); a position built with more face-down cards than a deal has fewer, maybe below 0.
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from server.engine.cards import CARDS, FOUNDATION, KING, N_COLUMNS, card_text, place_text
from server.engine.codes import FACE_DOWN, DealCode, Rule
from server.engine.errors import IllegalMove
from server.engine.moves import Action, Move

UNDO_LIMIT: Final = 100
GROUP_LIMIT: Final = 20
FOUNDATION_POINTS: Final = 10
FLIP_POINTS: Final = 5
WIN_SCORE: Final = 52 * FOUNDATION_POINTS + 21 * FLIP_POINTS

# History records, ints: (kind, card, source, destination, count, flipped 0/1, score before);
# the card is a `Card` (an int) when the move came through `play()`. The ranked score before is
# not kept: an undo subtracts what the move added (10 for kind 1, 5 for a flip).
_TABLEAU: Final = 0  # column -> column
_TO_FOUNDATION: Final = 1  # column -> foundation, the card's first time there in this line
_TAKE_BACK: Final = 2  # foundation -> column
_TO_FOUNDATION_AGAIN: Final = 3  # column -> foundation, a card that was there before
Record = tuple[int, int, int, int, int, int, int]
FACE_DOWN_DEALT: Final = 21
"""How many cards a deal lays face-down (SPEC 1.1); each turned face-up is worth 5 points."""

CARD_TEXT: Final = tuple(card_text(c) for c in range(52))
"""The text of every card int, by index (a table, faster than calling `card_text`)."""
_SUIT_TEXT: Final = tuple(list(CARD_TEXT[s * 13 : s * 13 + 13]) for s in range(4))
_CARD_TEXT_AT: Final = CARD_TEXT.__getitem__
_NONES: Final[tuple[list[str | None], ...]] = tuple([None] * n for n in range(52))

# The rule tables, shared with the solver. BELOW[c]: the cards that fit on a last card c, one
# rank lower, of the same suit (classic) or of any suit (relaxed); nothing fits on an ace.
# ABOVE[c]: the cards that c fits on; a king fits on none (only on an empty column).
_PEERS: Final = tuple(tuple(range(r, 52, 13)) for r in range(13))
CLASSIC_BELOW: Final = tuple((c - 1,) if c % 13 else () for c in range(52))
RELAXED_BELOW: Final = tuple(_PEERS[c % 13 - 1] if c % 13 else () for c in range(52))
CLASSIC_ABOVE: Final = tuple((c + 1,) if c % 13 != KING else () for c in range(52))
RELAXED_ABOVE: Final = tuple(_PEERS[c % 13 + 1] if c % 13 != KING else () for c in range(52))
KINGS: Final = (KING, 13 + KING, 26 + KING, 39 + KING)
_MOVES: Final = tuple(tuple(Move(CARDS[c], to) for to in range(N_COLUMNS + 1)) for c in range(52))


def ranked_score_of(reached: int, down: list[int]) -> int:
    """The ranked score (SPEC 1.5) of a position: 10 for each card in `reached`, 5 for each
    card of the 21 a deal lays face-down that is no longer face-down."""
    return FOUNDATION_POINTS * reached.bit_count() + FLIP_POINTS * (FACE_DOWN_DEALT - sum(down))


class Status(enum.StrEnum):
    ACTIVE = "active"
    WON = "won"
    ABANDONED = "abandoned"


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a finished game ended (game end as data)."""

    status: Status
    score: int
    moves: int


class Game:
    """One game of Russian Solitaire: deal it with `Game.deal(code)`, act with `play()`."""

    __slots__ = (
        "code",
        "columns",
        "down",
        "foundations",
        "hidden",
        "history",
        "moves",
        "ranked_score",
        "reached",
        "relaxed",
        "score",
        "status",
        "where",
    )

    def __init__(
        self,
        code: DealCode,
        columns: list[list[int]],
        down: list[int],
        foundations: list[int],
        *,
        score: int = 0,
        moves: int = 0,
        status: Status = Status.ACTIVE,
        history: list[Record] | None = None,
        reached: int | None = None,
    ) -> None:
        """A position as given (`snapshot.loads()` and the tests build games so).

        `reached` defaults to the cards on the foundations; the ranked score follows from it.
        """
        self.code = code
        self.relaxed = code.rule is Rule.RELAXED
        self.columns = columns
        self.down = down
        self.foundations = foundations
        self.score = score
        self.moves = moves
        self.status = status
        self.history: deque[Record] = deque(history or (), maxlen=UNDO_LIMIT)
        where = [FOUNDATION] * 52
        hidden = [False] * 52
        for c, column in enumerate(columns):
            for i, card in enumerate(column):
                where[card] = c
                hidden[card] = i < down[c]
        self.where = where
        self.hidden = hidden
        if reached is None:
            reached = 0
            for s, n in enumerate(foundations):
                reached |= ((1 << n) - 1) << (s * 13)
        self.reached = reached
        self.ranked_score = ranked_score_of(reached, down)

    @classmethod
    def deal(cls, code: DealCode) -> Game:
        """A new game dealt from `code` (SPEC 1.8)."""
        return cls(code, code.columns(), list(FACE_DOWN), [0, 0, 0, 0])

    # ------------------------------------------------------------------ queries

    @property
    def rule(self) -> Rule:
        return self.code.rule

    @property
    def won(self) -> bool:
        return self.status is Status.WON

    @property
    def undo_available(self) -> int:
        return len(self.history) if self.status is Status.ACTIVE else 0

    def outcome(self) -> Outcome | None:
        """The outcome of a finished game, or None while it is active."""
        if self.status is Status.ACTIVE:
            return None
        return Outcome(self.status, self.score, self.moves)

    def foundation_top(self, suit: int) -> int | None:
        n = self.foundations[suit]
        return suit * 13 + n - 1 if n else None

    def is_face_up(self, card: int) -> bool:
        """Whether `card` can be seen: face-up in a column or on a foundation."""
        c = self.where[card]
        if c == FOUNDATION:
            return True
        return self.columns[c].index(card) >= self.down[c]

    def refusal(self, card: int, to: int) -> str | None:
        """The rule id that forbids moving `card` (with all on top of it) to `to`, or None.

        This is the single source of legality: every other query and `play()` use it.
        """
        if self.status is not Status.ACTIVE:
            return "game_over"
        src = self.where[card]
        if src == FOUNDATION:
            suit, rank = divmod(card, 13)
            if self.foundations[suit] != rank + 1:
                return "foundation_top"
            if to == FOUNDATION:
                return "on_foundation"
            count = 1
        else:
            column = self.columns[src]
            index = column.index(card)
            if index < self.down[src]:
                return "face_down"
            count = len(column) - index
            if to == FOUNDATION:
                if count != 1:
                    return "not_last_card"
                suit, rank = divmod(card, 13)
                if self.foundations[suit] != rank:
                    return "foundation_order"
                return None
            if to == src:
                return "same_column"
        target = self.columns[to]
        if target:
            top = target[-1]
            if self.relaxed:
                if top % 13 != card % 13 + 1:
                    return "rank"
            elif top != card + 1 or card % 13 == KING:
                return "same_suit"
        elif card % 13 != KING:
            return "empty_column_king"
        if count > GROUP_LIMIT:
            return "group_too_large"
        return None

    def targets(self, card: int) -> list[int]:
        """The legal places for `card`: columns left to right, then the foundation.

        Empty for a card the player cannot see, so that it reveals nothing.
        """
        if self.status is not Status.ACTIVE or not self.is_face_up(card):
            return []
        refusal = self.refusal
        return [to for to in range(N_COLUMNS + 1) if refusal(card, to) is None]

    def legal_moves(self) -> list[Move]:
        """Every legal move in this position, for the columns left to right, then foundations.

        This is the hot path of the engine (bench/engine.py), so instead of asking `refusal()`
        about all 8 places of every face-up card it starts from the destinations: the last card
        of a column admits only the cards one rank lower (of its suit, under the classic rule),
        an empty column only the kings, a foundation only the next card of its suit. It then
        applies to each candidate exactly the remaining checks of `refusal()` (face-up, top of
        its foundation, not its own column, at most `GROUP_LIMIT` cards). The property tests
        prove that the list equals every (card, place) for which `refusal()` is None.
        """
        if self.status is not Status.ACTIVE:
            return []
        columns, where, hidden, foundations = (
            self.columns,
            self.where,
            self.hidden,
            self.foundations,
        )
        below = RELAXED_BELOW if self.relaxed else CLASSIC_BELOW
        out: list[Move] = []
        home: list[Move] = []
        for to, target in enumerate(columns):
            if target:
                last = target[-1]
                if foundations[last // 13] == last % 13:
                    home.append(_MOVES[last][FOUNDATION])
                candidates = below[last]
            else:
                candidates = KINGS
            for card in candidates:
                src = where[card]
                if src == FOUNDATION:
                    if foundations[card // 13] == card % 13 + 1:
                        out.append(_MOVES[card][to])
                elif src != to and not hidden[card]:
                    column = columns[src]
                    # A group can only exceed the limit in a column longer than the limit.
                    if len(column) <= GROUP_LIMIT or (
                        len(column) - column.index(card) <= GROUP_LIMIT
                    ):
                        out.append(_MOVES[card][to])
        out += home
        return out

    def resolve_tap(self, card: int) -> Move:
        """A tap (SPEC 1.7): the card to its foundation, or `IllegalMove`."""
        rule = self.refusal(card, FOUNDATION)
        if rule is not None:
            raise self._illegal(rule, card, FOUNDATION, f"tap {card_text(card)}")
        return _MOVES[card][FOUNDATION]

    def resolve_double_tap(self, card: int) -> Move:
        """A double tap (SPEC 1.7).

        First as a tap; then the longest column the card (with all on top of it) fits on, ties
        to the leftmost; then, for a king, the leftmost empty column. Otherwise `no_place`.
        """
        action = f"double_tap {card_text(card)}"
        first = self.refusal(card, FOUNDATION)
        if first is None:
            return _MOVES[card][FOUNDATION]
        if first in ("game_over", "face_down", "foundation_top"):
            raise self._illegal(first, card, FOUNDATION, action)
        best = -1
        best_len = 0
        empty = -1
        for to in range(N_COLUMNS):
            if self.refusal(card, to) is None:
                size = len(self.columns[to])
                if size == 0:
                    if empty < 0:
                        empty = to
                elif size > best_len:
                    best, best_len = to, size
        if best >= 0:
            return _MOVES[card][best]
        if empty >= 0:
            return _MOVES[card][empty]
        raise IllegalMove("no_place", action, {"card": card_text(card)})

    # ------------------------------------------------------------------ actions

    def play(self, action: Action) -> Action:
        """Apply `action` or raise `IllegalMove` (changing nothing). Returns the action."""
        if isinstance(action, Move):
            self.apply(action.card, action.to)
        else:
            self.undo()
        return action

    def apply(self, card: int, to: int) -> None:
        """Move `card` (with all on top of it) to `to`, or raise `IllegalMove`."""
        rule = self.refusal(card, to)
        if rule is not None:
            raise self._illegal(rule, card, to, f"{card_text(card)}-{place_text(to)}")
        score = self.score
        src = self.where[card]
        if src == FOUNDATION:
            self.foundations[card // 13] -= 1
            self.columns[to].append(card)
            self.where[card] = to
            self.history.append((_TAKE_BACK, card, FOUNDATION, to, 1, 0, score))
            self.moves += 1
            return
        column = self.columns[src]
        if to == FOUNDATION:
            column.pop()
            self.foundations[card // 13] += 1
            self.where[card] = FOUNDATION
            self.score = score + FOUNDATION_POINTS
            bit = 1 << card
            if self.reached & bit:
                kind = _TO_FOUNDATION_AGAIN
            else:
                self.reached |= bit
                self.ranked_score += FOUNDATION_POINTS
                kind = _TO_FOUNDATION
            count = 1
        else:
            index = column.index(card)
            group = column[index:]
            del column[index:]
            self.columns[to].extend(group)
            where = self.where
            for moved in group:
                where[moved] = to
            kind = _TABLEAU
            count = len(group)
        flipped = 0
        if column and self.down[src] == len(column):
            self.down[src] -= 1
            self.hidden[column[-1]] = False
            self.score += FLIP_POINTS
            self.ranked_score += FLIP_POINTS
            flipped = 1
        self.history.append((kind, card, src, to, count, flipped, score))
        self.moves += 1
        if to == FOUNDATION and self.foundations == [13, 13, 13, 13]:
            self.status = Status.WON
            self.history.clear()

    def undo(self) -> None:
        """Take back the last move (SPEC 1.6), or raise `IllegalMove`."""
        if self.status is not Status.ACTIVE:
            raise IllegalMove("game_over", "undo")
        if not self.history:
            raise IllegalMove("nothing_to_undo", "undo")
        kind, card, src, to, count, flipped, score = self.history.pop()
        self.score = score
        if kind == _TAKE_BACK:
            self.columns[to].pop()
            self.foundations[card // 13] += 1
            self.where[card] = FOUNDATION
            return
        column = self.columns[src]
        if flipped:
            self.down[src] += 1
            self.hidden[column[-1]] = True
            self.ranked_score -= FLIP_POINTS
        if kind != _TABLEAU:  # to the foundation, the first time or again
            self.foundations[card // 13] -= 1
            column.append(card)
            self.where[card] = src
            if kind == _TO_FOUNDATION:
                self.reached &= ~(1 << card)
                self.ranked_score -= FOUNDATION_POINTS
        else:
            target = self.columns[to]
            group = target[-count:]
            del target[-count:]
            column.extend(group)
            where = self.where
            for moved in group:
                where[moved] = src

    def abandon(self) -> None:
        if self.status is not Status.ACTIVE:
            raise IllegalMove("game_over", "abandon")
        self.status = Status.ABANDONED
        self.history.clear()

    def _illegal(self, rule: str, card: int, to: int, action: str) -> IllegalMove:
        params = {"card": card_text(card), "place": place_text(to)}
        if rule in ("same_suit", "rank") and to != FOUNDATION and self.columns[to]:
            params["target"] = card_text(self.columns[to][-1])
        if rule == "foundation_order":
            suit = card // 13
            n = self.foundations[suit]
            params["needed"] = card_text(suit * 13 + n) if n < 13 else ""
        return IllegalMove(rule, action, params)

    # ------------------------------------------------------------------ views

    def copy(self) -> Game:
        """An independent copy: playing on it leaves this game as it is."""
        twin = Game.__new__(Game)
        twin.code = self.code
        twin.relaxed = self.relaxed
        twin.columns = [list(c) for c in self.columns]
        twin.down = list(self.down)
        twin.foundations = list(self.foundations)
        twin.score = self.score
        twin.reached = self.reached
        twin.ranked_score = self.ranked_score
        twin.moves = self.moves
        twin.status = self.status
        twin.history = self.history.copy()
        twin.where = list(self.where)
        twin.hidden = list(self.hidden)
        return twin

    def tableau_view(self, reveal: bool = False) -> list[list[str | None]]:
        """The columns bottom first as card text; face-down cards are None unless `reveal`."""
        text = _CARD_TEXT_AT
        if reveal:
            return [[*map(text, column)] for column in self.columns]
        return [
            _NONES[down] + [*map(text, column[down:])] if down else [*map(text, column)]
            for column, down in zip(self.columns, self.down, strict=True)
        ]

    def foundations_view(self) -> list[list[str]]:
        """Each foundation bottom first (ace up) as card text, in the suit order S, H, D, C."""
        return [texts[:n] for texts, n in zip(_SUIT_TEXT, self.foundations, strict=True)]

    def public_view(self) -> dict[str, object]:
        """The state as any client may see it: face-down cards are None."""
        return {
            "code": str(self.code),
            "rule": self.rule.value,
            "status": self.status.value,
            "score": self.score,
            "ranked_score": self.ranked_score,
            "moves": self.moves,
            "undo_available": self.undo_available,
            "tableau": self.tableau_view(),
            "foundations": self.foundations_view(),
        }

    def cards(self) -> Iterator[int]:
        """Every card in the game: the columns bottom first, then the foundations."""
        for column in self.columns:
            yield from column
        for s, n in enumerate(self.foundations):
            yield from range(s * 13, s * 13 + n)

    def key(self) -> tuple[object, ...]:
        """Everything that defines the state, for equality checks (history included)."""
        return (
            self.code,
            tuple(tuple(c) for c in self.columns),
            tuple(self.down),
            tuple(self.foundations),
            self.score,
            self.ranked_score,
            self.reached,
            self.moves,
            self.status,
            tuple(self.history),
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Game) and self.key() == other.key()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"<Game {self.code} {self.status} score={self.score}"
            f" ranked_score={self.ranked_score} moves={self.moves}>"
        )
