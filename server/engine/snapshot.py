"""A compact text form of a whole game state that round-trips, undo history included.

    S2|RU1-C-AAAAABB|active|35|25|10|0.1.0.0|2000|0:5S4S/1:6S4H7STDJC8D/.../6:QH4C...9S2D|
    0.39.2.3.2.0.0,...,1.13.4.7.1.0.15,0.30.3.4.7.0.25,2.13.7.3.1.0.25,3.13.3.7.1.0.25

(one line; shortened here: AH went home at move 7, was taken back to t4 and went home again,
so the score counts it twice and the ranked score once).

Fields: format, code, status, score, ranked score, moves, the four foundation counts, `reached`
(the set of cards that have reached their foundation in the current line of play, as the lower
case hex of its 52-bit mask, bit `1 << card`), the columns as `<face-down count>:<cards bottom
first>`, and the undo history (oldest first), each record as its seven integers: kind (0 column
to column, 1 to the foundation the first time in this line, 2 take-back, 3 to the foundation
again), card, source, destination, count, flipped (0 or 1), score before. The server stores it
as the game's snapshot and rebuilds the game from it.

`loads` also reads the earlier format `S1` (games stored before the ranked score existed):

    S1|code|status|score|moves|foundations|columns|history

An S1 snapshot does not say which cards reached their foundation and were taken back before,
so it is approximated from what it holds: `reached` is the cards on the foundations plus every
card of a to-foundation or take-back record of its history. A to-foundation record counts as a
first placement unless an older record of the history already moved that card to or from its
foundation (then it is a re-placement); so take-back cycles within the last 100 moves keep
their meaning exactly. A card that was taken back more than 100 moves before and still lies in
a column is missed: placing it again will count as its first time (at most 10 points too many
per such card), and a re-placement whose take-back is older than the history counts as a first
placement (undoing it takes 10 from the ranked score). The ranked score follows from `reached`
and the face-down cards as always.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Final

from server.engine.cards import FOUNDATION
from server.engine.codes import DealCode
from server.engine.errors import NotationError
from server.engine.game import (
    _TABLEAU,
    _TAKE_BACK,
    _TO_FOUNDATION,
    _TO_FOUNDATION_AGAIN,
    CARD_TEXT,
    FLIP_POINTS,
    FOUNDATION_POINTS,
    UNDO_LIMIT,
    Game,
    Record,
    Status,
)

FORMAT: Final = "S2"
_CARD: Final = {text: c for c, text in enumerate(CARD_TEXT)}
_ALL_CARDS: Final = (1 << 52) - 1
_DOWN: Final = tuple(f"{d}:" for d in range(53))
_CARD_TEXT_AT: Final = CARD_TEXT.__getitem__

# A record's text, cached: consecutive snapshots of a game share all but one record.
_record_text: Final = lru_cache(maxsize=1 << 15)("%d.%d.%d.%d.%d.%d.%d".__mod__)
_code_text: Final = lru_cache(maxsize=1 << 12)(str)


def dumps(game: Game) -> str:
    """The S2 text of `game`."""
    columns = "/".join(
        [
            _DOWN[down] + "".join(map(_CARD_TEXT_AT, column))
            for column, down in zip(game.columns, game.down, strict=True)
        ]
    )
    found = game.foundations
    return (
        f"S2|{_code_text(game.code)}|{game.status.value}|{game.score}|{game.ranked_score}"
        f"|{game.moves}|{found[0]}.{found[1]}.{found[2]}.{found[3]}|{game.reached:x}"
        f"|{columns}|{','.join(map(_record_text, game.history))}"
    )


def loads(text: str, *, check_history: bool = True) -> Game:
    """Rebuild a game from `dumps()` output (S2) or an S1 snapshot; malformed text or a state
    that play cannot reach in the ways checked here raises `NotationError`.

    `check_history=False` leaves out the costliest check, that every undo record undoes
    cleanly, for text this process's own `dumps` wrote moments before (a change passed between
    server processes); everything else is still checked."""
    try:
        return _loads(text, check_history)
    except NotationError:
        raise
    except (ValueError, IndexError, KeyError) as exc:
        raise NotationError("snapshot", text[:80], str(exc)) from None


def _bad(text: str, reason: str) -> NotationError:
    return NotationError("snapshot", text[:80], reason)


@lru_cache(maxsize=1 << 15)
def _record(item: str) -> Record:
    kind, card, src, to, count, flipped, before = map(int, item.split("."))
    return (kind, card, src, to, count, flipped, before)


def _loads(text: str, check_history: bool = True) -> Game:
    parts = text.split("|")
    fmt = parts[0]
    if fmt == FORMAT:
        (
            code,
            status,
            score,
            ranked,
            moves,
            foundations,
            reached_text,
            columns_text,
            history_text,
        ) = parts[1:]
    elif fmt == "S1":
        code, status, score, moves, foundations, columns_text, history_text = parts[1:]
        ranked = reached_text = ""
    else:
        raise _bad(text, f"unknown format {fmt!r}")
    found = [int(n) for n in foundations.split(".")]
    columns: list[list[int]] = []
    down: list[int] = []
    for part in columns_text.split("/"):
        d, _, cards = part.partition(":")
        columns.append([_CARD[cards[i : i + 2]] for i in range(0, len(cards), 2)])
        down.append(int(d))
    history = list(map(_record, history_text.split(","))) if history_text else []
    if len(columns) != 7 or len(found) != 4 or len(history) > UNDO_LIMIT:
        raise _bad(text, "wrong number of columns or foundations")
    if any(not 0 <= n <= 13 for n in found):
        raise _bad(text, "a foundation holds 0 to 13 cards")
    seen = sorted(c for col in columns for c in col)
    seen += [s * 13 + r for s, n in enumerate(found) for r in range(n)]
    if sorted(seen) != list(range(52)):
        raise _bad(text, "the cards are not one whole deck")
    for column, hidden in zip(columns, down, strict=True):
        if not (0 <= hidden < len(column) or hidden == len(column) == 0):
            raise _bad(text, "a column's last card is face-up and counts are >= 0")
    kinds = (_TABLEAU, _TO_FOUNDATION, _TAKE_BACK, _TO_FOUNDATION_AGAIN)
    for record in history:
        if record[0] not in kinds or record[5] not in (0, 1) or not 0 <= record[1] < 52:
            raise _bad(text, "a history record has an unknown kind, card or flip")
    on_foundations = 0
    for s, n in enumerate(found):
        on_foundations |= ((1 << n) - 1) << (s * 13)
    if fmt == FORMAT:
        reached = int(reached_text, 16)
        if reached_text != f"{reached:x}":
            raise _bad(text, "reached is a lower-case hex number")
    else:
        reached = _from_s1(history, text) | on_foundations
    if reached & ~_ALL_CARDS or on_foundations & ~reached:
        raise _bad(text, "reached holds every card on a foundation, and only cards")
    game = Game(
        DealCode.parse(code),
        columns,
        down,
        found,
        score=int(score),
        moves=int(moves),
        status=Status(status),
        history=history,
        reached=reached,
    )
    if game.score < 0 or game.moves < len(history):
        raise _bad(text, "the score is >= 0, the move counter counts the history's moves")
    if fmt == FORMAT and int(ranked) != game.ranked_score:
        raise _bad(text, "the ranked score is 10 per reached card and 5 per turned card")
    if game.status is not Status.ACTIVE and history:
        raise _bad(text, "a finished game has no undo history")
    if game.status is Status.WON and on_foundations != _ALL_CARDS:
        raise _bad(text, "a won game has every card on its foundation")
    if check_history:
        _check_history(game, text)
    return game


def _from_s1(history: list[Record], text: str) -> int:
    """S1 records: mark re-placements (kind 3) and gather the cards they show have reached."""
    touched = 0
    for i, record in enumerate(history):
        kind, card = record[0], record[1]
        if kind == _TO_FOUNDATION_AGAIN:
            raise _bad(text, "an S1 history record has an unknown kind")
        if kind == _TABLEAU:
            continue
        bit = 1 << card
        if kind == _TO_FOUNDATION and touched & bit:
            history[i] = (_TO_FOUNDATION_AGAIN, *record[1:])
        touched |= bit
    return touched


def _check_history(game: Game, text: str) -> None:
    """Every undo record must undo cleanly, newest first, on a copy of the game, and account
    for the score; a history of the whole game must explain every card in `reached`."""
    copy = game.copy()
    history = copy.history
    columns, foundations, down = copy.columns, copy.foundations, copy.down
    undo = copy.undo
    while history:
        kind, card, src, to, count, flipped, before = history[-1]
        if kind == _TABLEAU:  # a group of `count` cards from `src` lies on top of `to`
            ok = (
                0 <= src < 7
                and 0 <= to < 7
                and src != to
                and 1 <= count <= len(columns[to])
                and columns[to][-count] == card
                and copy.score == before + FLIP_POINTS * flipped
            )
        elif kind == _TAKE_BACK:  # the card lies last on column `to`, and it has been home
            ok = (
                src == FOUNDATION
                and 0 <= to < 7
                and count == 1
                and not flipped
                and columns[to][-1:] == [card]
                and foundations[card // 13] == card % 13
                and copy.reached >> card & 1 == 1
                and copy.score == before
            )
        else:  # to the foundation: its top card, so in `reached`
            ok = (
                0 <= src < 7
                and to == FOUNDATION
                and count == 1
                and foundations[card // 13] == card % 13 + 1
                and copy.reached >> card & 1 == 1
                and copy.score == before + FOUNDATION_POINTS + FLIP_POINTS * flipped
            )
        if ok and flipped:  # the card that the move turned up is the last of `src`
            ok = len(columns[src]) > 0 and down[src] == len(columns[src]) - 1
        if not ok or before < 0:
            raise _bad(text, "the undo history does not fit the state")
        undo()
    if game.moves == len(game.history):  # no undo yet, no move lost: the history is all play
        home = 0
        for s, n in enumerate(foundations):
            home |= ((1 << n) - 1) << (s * 13)
        if copy.reached != home:
            raise _bad(text, "a card reached its foundation in no move of the game")


def foundation_cards(text: str) -> int:
    """How many cards lie on the foundations of a stored game, read from its snapshot text
    without rebuilding the game (race standings read it for every racer)."""
    fields = text.split("|", 8)
    counts = fields[6] if fields[0] == "S2" else fields[5]
    return sum(int(n) for n in counts.split("."))
