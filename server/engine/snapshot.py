"""A compact text form of a whole game state that round-trips, undo history included.

    S1|RU1-C-AAAAABB|active|35|12|1.0.0.2|0:5S/1:6S4H7S|0.45.1.3.2.1.30,1.0.2.7.1.0.35

Fields: format, code, status, score, moves, the four foundation counts, the columns as
`<face-down count>:<cards bottom first>`, and the undo history (oldest first), each record as
its seven integers. The server stores it as the game's snapshot and rebuilds the game from it.
"""

from __future__ import annotations

from collections import deque
from typing import Final

from server.engine.cards import card_text
from server.engine.codes import DealCode
from server.engine.errors import NotationError
from server.engine.game import UNDO_LIMIT, Game, Record, Status

FORMAT: Final = "S1"
_CARD: Final = {card_text(c): c for c in range(52)}


def dumps(game: Game) -> str:
    columns = "/".join(
        f"{down}:{''.join(card_text(c) for c in column)}"
        for column, down in zip(game.columns, game.down, strict=True)
    )
    history = ",".join(".".join(str(int(v)) for v in record) for record in game.history)
    foundations = ".".join(str(n) for n in game.foundations)
    return "|".join(
        (
            FORMAT,
            str(game.code),
            game.status.value,
            str(game.score),
            str(game.moves),
            foundations,
            columns,
            history,
        )
    )


def loads(text: str) -> Game:
    """Rebuild a game from `dumps()` output; malformed text raises `NotationError`."""
    try:
        return _loads(text)
    except NotationError:
        raise
    except (ValueError, IndexError, KeyError) as exc:
        raise NotationError("snapshot", text[:80], str(exc)) from None


def _loads(text: str) -> Game:
    fmt, code, status, score, moves, foundations, columns_text, history_text = text.split("|")
    if fmt != FORMAT:
        raise NotationError("snapshot", text[:80], f"unknown format {fmt!r}")
    found = [int(n) for n in foundations.split(".")]
    columns: list[list[int]] = []
    down: list[int] = []
    for part in columns_text.split("/"):
        d, _, cards = part.partition(":")
        columns.append([_CARD[cards[i : i + 2]] for i in range(0, len(cards), 2)])
        down.append(int(d))
    history: list[Record] = []
    if history_text:
        for item in history_text.split(","):
            k, card, src, to, count, flipped, before = (int(v) for v in item.split("."))
            history.append((k, card, src, to, count, bool(flipped), before))
    if len(columns) != 7 or len(found) != 4 or len(history) > UNDO_LIMIT:
        raise NotationError("snapshot", text[:80], "wrong number of columns or foundations")
    if any(not 0 <= n <= 13 for n in found):
        raise NotationError("snapshot", text[:80], "a foundation holds 0 to 13 cards")
    seen = sorted(c for col in columns for c in col)
    seen += [s * 13 + r for s, n in enumerate(found) for r in range(n)]
    if sorted(seen) != list(range(52)):
        raise NotationError("snapshot", text[:80], "the cards are not one whole deck")
    for column, hidden in zip(columns, down, strict=True):
        if not (0 <= hidden < len(column) or hidden == len(column) == 0):
            raise NotationError(
                "snapshot", text[:80], "a column's last card is face-up and counts are >= 0"
            )
    game = Game(
        DealCode.parse(code),
        columns,
        down,
        found,
        score=int(score),
        moves=int(moves),
        status=Status(status),
        history=history,
    )
    if game.score < 0 or game.moves < 0:
        raise NotationError("snapshot", text[:80], "the score and the move counter are >= 0")
    _check_history(game, text)
    return game


def _check_history(game: Game, text: str) -> None:
    """Every undo record must undo cleanly, newest first, on a copy of the game."""
    copy = game.copy()
    history = list(copy.history)
    columns, foundations = copy.columns, copy.foundations
    while history:
        kind, card, src, to, count, flipped, before = history[-1]
        suit, rank = divmod(card, 13) if 0 <= card < 52 else (-1, -1)
        if kind == 2:  # take-back: the card lies last on column `to`
            ok = 0 <= to < 7 and columns[to][-1:] == [card] and foundations[suit] == rank
        elif kind == 1:  # to the foundation: it is the top of its foundation
            ok = 0 <= src < 7 and suit >= 0 and foundations[suit] == rank + 1
        elif kind == 0:  # a group of `count` cards from `src` lies on top of `to`
            ok = (
                0 <= src < 7
                and 0 <= to < 7
                and src != to
                and 1 <= count <= len(columns[to])
                and columns[to][-count] == card
            )
        else:
            ok = False
        if ok and flipped:  # the card that the move turned up is the last of `src`
            ok = kind != 2 and len(columns[src]) > 0 and copy.down[src] == len(columns[src]) - 1
        if not ok or before < 0:
            raise NotationError("snapshot", text[:80], "the undo history does not fit the state")
        copy.history = deque(history, maxlen=UNDO_LIMIT)
        copy.undo()
        history.pop()
