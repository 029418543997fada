"""A solver for Russian Solitaire with every card known (issue 5).

`solve(game)` decides whether a position can still be won, knowing the face-down cards: the
`Verdict` says WINNABLE (with a winning line of engine `Move`s from that position), UNWINNABLE,
or UNKNOWN when the node budget ran out first. `solve_deal(code)` does the same for a fresh deal.
`search()` is the same search with a `Pruning` switch per reduction; the tests use it to show
that each reduction keeps every verdict. Like the rest of the engine this module is pure: no
I/O, no clock, no randomness. The input game is never modified.

Rules
-----
Exactly the engine's (`Game.refusal`): a face-up card moves with every card on top of it (at most
`GROUP_LIMIT` cards) onto a column end one rank higher, of the same suit (classic) or of any suit
(relaxed); only a king group goes to an empty column; the end card of a column goes to its
foundation; with `take_backs` the top card of a foundation goes back onto a column end one rank
higher (a king onto an empty column). A face-down card turns face-up when it becomes the end of
its column. Every line the solver returns is replayed through `Game.play` by the tests.

Representation
--------------
A state is 7 columns as `bytes`, bottom first, where a face-down card is stored as card + 64, and
4 foundation counts. A group move is two slices and a concatenation, a flip rewrites the last
byte. A card `x` is found with `x in column`, which never matches a face-down byte.

Search
------
Iterative depth-first search with a transposition set. A node is a state taken from the stack
(`Verdict.nodes` counts them); after `max_nodes` nodes the answer is UNKNOWN. All successors of
a node are generated at once; those already seen are dropped and the others are pushed so that the
best-ordered one is expanded next. The search stops at the first won state and rebuilds the line
by following the parent links, forced moves included.

Canonical form. The rules never look at a column's position, so states that differ only by the
order of their columns are equivalent. The key of a state is its columns sorted and joined with the
byte 0xFF (face-down cards are part of the bytes); the foundations need no place in it, since every
card not in a column is on its foundation and a foundation always holds its suit from the ace up.

Restarts. A depth-first search can spend its whole budget under one bad early move. Relaxed deals
are nearly all winnable, so there the search first runs short searches (`_TRIAL_NODES` nodes each)
with each of the move orderings below, then one with the default ordering and the rest of the
budget. Each is a complete search on its own: the first that ends, won or exhausted, decides.

Move ordering (it only matters for winnable deals; an unwinnable one is searched to the end):
first the moves that turn a face-down card up (the deeper the pile the sooner), then those that
empty a column, then other tableau moves (onto the next card of the same suit first), then
foundation moves that were not forced, last the moves that take a card off a card one rank higher
(relaxed rule) and take-backs. The other orderings uncover the shallowest pile first, or give no
bonus to the same suit, or empty columns before anything else.

Why the search is exact
-----------------------
Let G be the game searched and d(S) the length of a shortest winning line from S in G (infinite
when there is none). WINNABLE is always right: the line is made of legal moves (and is replayed by
the tests). For UNWINNABLE, every reduction below is of one of three kinds:
  (a) a forced move: a state S with a safe move is given that single successor S', and
      d(S') < d(S) whenever d(S) is finite;
  (b) a successor is left out because it is equivalent (a column permutation) to a state that is
      explored anyway;
  (c) a state is dropped because it has no winning line at all.
Then by induction on d, every explored state with a finite d has an explored successor with a
smaller d (or is won), and a depth-first search with a visited set explores every state it can
reach; so if the root is winnable a won state is found. The induction runs over equivalence
classes, so the canonical keys do not break it.

P1, classic: take-backs never help (`Pruning.CLASSIC_NO_TAKE_BACKS`). Under the classic rule the
only card that fits on a card t is t-1 of its suit. Take any winning line with take-backs, and
call T the cards taken back from a foundation and not yet returned. When t was taken back, t-1 was
on its foundation, and it can leave it again only by a take-back; so the only card ever placed on
a T card is a T card, and T cards form the top of their columns. Remove them (put them back on
their foundations) from every state of the line: the columns stay valid (their new ends were ends
before a T card was put on them, so they are face-up), every move of a non-T card stays legal (its
target is not a T card, its group is smaller, a column that held only T cards is empty), moves of
T cards and take-backs become no-ops, and the last state is unchanged. So a line without
take-backs exists, no longer than the first one. The classic search never generates take-backs, and
the classic verdict with or without them is the same: the winnable share with take-backs equals the
share without (bench/solver.py measures both).

P2, safe foundation moves (`Pruning.SAFE_FOUNDATION`), a move of kind (a). A column end x of rank r
whose foundation holds r cards is played at once when
  - classic without take-backs: always;
  - relaxed, or classic with take-backs: r <= every foundation count (all cards of rank < r are
    home).
Proof. Take a winning line L from S and build a line from S' (x on its foundation) that mirrors L.
Let X be x while it is in a column, plus every card of rank < r that is in a column (classic
without take-backs: just x). At S the cards of rank < r are all home, so X = {x}, and a card placed
on an X card has a rank < r and so is in X itself: X cards are always the top of their columns.
The mirror state is the state of L with the X cards moved to their foundations, and its
face-down counts are at most those of L (x may have uncovered a card earlier). Every move of L
maps to the same move or to nothing:
  - a move of an X card, or a take-back of a card of rank < r (or of x): nothing, the mirror state
    does not change;
  - a tableau move of another card b: its target is not an X card (b would have rank < r), so it is
    still a column end in the mirror, b is still face-up, its group is smaller: legal, same result;
  - a take-back of a card y of rank >= r other than x: its suit has no X card, so y is also the
    top of that foundation in the mirror, and its target (rank > r, or an empty column) is not an X
    card: legal;
  - a foundation move of another card b: its rank is >= r (cards of rank < r in columns are X
    cards), so the mirror holds the same count for that suit (for x's suit, b is above x, so x is
    home): legal.
At the end of L every card is home, X is empty and the mirror is the won state. The mirror line
leaves out at least the move that brings x home, so d(S') < d(S). A take-back that such a forced
move would undo at once leads back to the same state and is not generated.

P3, symmetry (`CANONICAL`, `ONE_EMPTY_COLUMN`, `KING_AT_BOTTOM`), kind (b). States that differ by a
column permutation are won alike (the rules never look at column positions), so one key serves
them all; moving a king group to one empty column or to another gives permuted states, so only the
leftmost empty column is tried; and a king that is the bottom card of its column, moved to an empty
column, only permutes the columns (the successor is the node itself).

P4, dead ends (`Pruning.DEAD_END`), kind (c). A relaxation of the game proves that some card can
never reach its foundation. For a card c it has four events: F(c) turned face-up, E(c) is a column
end, L(c) has left the card it lies on (or the bottom of its column), H(c) is home; and EMPTY: a
column is empty. They are derived as the least fixpoint of:
  - facts: the face-up cards, the column ends, the cards already home (with take-backs allowed,
    also E for them: they may come back as column ends), EMPTY if a column is empty;
  - F(c) <= L(a) where a lies on c;  E(c) <= F(c) and L(a) (or just F(c) if nothing lies on c);
  - H(c) <= E(c) and H(c-1) (an ace needs E only);  L(c) <= H(c);
  - L(c) <= F(c) and E(d) for some target d of c (one rank higher; classic: of c's suit); if d
    lies above c in c's own column, also L(e) for some card e between c (excluded) and d
    (included);
  - L(K) <= F(K) and EMPTY for a king K;
  - EMPTY <= L(b) for the bottom card b of a column (H(b) if b is a king).
Here "lies on", "above" and "bottom" refer to S. Soundness: along any winning line, give every
event the time of its first occurrence. Each rule holds for these times, with body events no later
than the head (within one move: the moving card's H, then its L, then F and E of the card it
uncovers): a face-down card turns up exactly when the card on it leaves; a card is an end once the
card on it at S has left (nothing can be put on a card that is not an end, so until then it is the
same card); a card goes home as an end, after the card below it in its suit; a card leaves its
place at S by going home, by a king move (which needs an empty column) or by a tableau move onto a
column end d, which was an end before (a card taken back from a foundation that was home at S is
covered by the facts), and d is not above c in one column while every card between them still
lies where it lay at S (d would be in c's own group); the first column to become empty loses its
bottom card of S, which cannot leave by a king move since no column was empty. So every event of a
winning line is derivable, and if some H(c) is not, no winning line exists.
The check runs at the root and, in relaxed games, at every node. Under the classic rule a move only
adds facts to the relaxation, except a king move that fills the last empty column and a group move
that puts a card z+1 above z in the target column (a new "between" condition), so only the states
reached by those are checked again (leaving out a check is always sound).

The rule "x may move onto x+1 without branching" is NOT used: it is false (moving 3 onto 4 on top
of x's own group may be needed first; tests/engine/test_solver.py keeps a deal where it fails).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final

from server.engine.codes import DealCode
from server.engine.game import (
    CLASSIC_ABOVE,
    CLASSIC_BELOW,
    GROUP_LIMIT,
    KINGS,
    RELAXED_ABOVE,
    RELAXED_BELOW,
    Game,
    Status,
)
from server.engine.moves import Move, move

__all__ = ["Pruning", "SolveStatus", "Verdict", "dead_end", "search", "solve", "solve_deal"]

_F: Final = 7  # the place index of the foundation in (card, place) pairs
_DOWN: Final = 64  # a face-down card is stored as card + _DOWN
_SEP: Final = b"\xff"
_FLIP: Final = tuple(bytes((b - _DOWN,)) if b >= _DOWN else b"" for b in range(128))
_ONE: Final = tuple(bytes((b,)) for b in range(128))
_WON: Final = [13, 13, 13, 13]
# Move ordering classes (higher is tried first).
_REVEAL: Final = 40
_EMPTIES: Final = 30
_PLAIN: Final = 20
_HOME: Final = 10
_LAST: Final = 0


@dataclass(frozen=True, slots=True)
class _Ordering:
    depth: int  # +1: uncover the deepest pile first; -1: the shallowest (deep ones come late)
    same_suit: int  # bonus for a move onto the next card of the same suit
    empties: int  # the class of moves that empty a column


_ORDERINGS: Final = (
    _Ordering(1, 1, _EMPTIES),
    _Ordering(-1, 1, _EMPTIES),
    _Ordering(1, 0, _EMPTIES),
    _Ordering(1, 1, _REVEAL + 5),
)
# Relaxed games first try each ordering for this many nodes (restarts), then search to the end.
_TRIAL_NODES: Final = 300


class SolveStatus(enum.StrEnum):
    WINNABLE = "winnable"
    UNWINNABLE = "unwinnable"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Verdict:
    """The answer of the solver.

    `line` is a winning line of engine moves from the given position (None unless WINNABLE);
    `nodes` is the number of states expanded.
    """

    status: SolveStatus
    line: tuple[Move, ...] | None
    nodes: int


class Pruning(enum.Flag):
    """The reductions of the search (see the module docstring); `solve` uses them all."""

    NONE = 0
    CLASSIC_NO_TAKE_BACKS = enum.auto()
    SAFE_FOUNDATION = enum.auto()
    CANONICAL = enum.auto()
    ONE_EMPTY_COLUMN = enum.auto()
    KING_AT_BOTTOM = enum.auto()
    DEAD_END = enum.auto()
    ALL = (
        CLASSIC_NO_TAKE_BACKS
        | SAFE_FOUNDATION
        | CANONICAL
        | ONE_EMPTY_COLUMN
        | KING_AT_BOTTOM
        | DEAD_END
    )


def solve(game: Game, *, take_backs: bool = True, max_nodes: int = 200_000) -> Verdict:
    """Decide whether `game` can still be won, with every card known.

    `take_backs=False` forbids moves from a foundation back to the tableau (PySolFC's rules).
    """
    return search(game, take_backs=take_backs, max_nodes=max_nodes)


def solve_deal(code: DealCode, *, take_backs: bool = True, max_nodes: int = 200_000) -> Verdict:
    """`solve` on the fresh deal of `code`."""
    return search(Game.deal(code), take_backs=take_backs, max_nodes=max_nodes)


_Line = list[tuple[int, int]]  # (card, place) pairs; place 0..6 a column, _F the foundation
_Trail = tuple["_Trail", tuple[tuple[int, int], ...]] | None
_Child = tuple[int, list[bytes], list[int], _Line, bool]


def search(
    game: Game,
    *,
    take_backs: bool = True,
    max_nodes: int = 200_000,
    prunings: Pruning = Pruning.ALL,
) -> Verdict:
    """`solve` with a choice of reductions (for the tests: each must keep every verdict)."""
    if max_nodes < 1:
        raise ValueError("max_nodes must be at least 1")
    if game.status is Status.WON:
        return Verdict(SolveStatus.WINNABLE, (), 0)
    if game.status is not Status.ACTIVE:
        return Verdict(SolveStatus.UNWINNABLE, None, 0)
    return _Search(game, take_backs, prunings).run(max_nodes)


def dead_end(game: Game, *, take_backs: bool = True) -> bool:
    """Whether the relaxation P4 proves at once that `game` can no longer be won.

    True means unwinnable; False proves nothing. Classic games are judged without take-backs,
    which P1 shows to be equivalent.
    """
    state = _Search(game, take_backs, Pruning.ALL)
    return state.is_dead(state.cols, state.found)


def _line(seg: _Line | tuple[tuple[int, int], ...]) -> list[Move]:
    return [move(card, place) for card, place in seg]


class _Search:
    """One search: the flags, the root state, and the expansion of a state."""

    def __init__(self, game: Game, take_backs: bool, prunings: Pruning) -> None:
        self.relaxed = relaxed = game.relaxed
        # P1: the classic search never takes a card back.
        self.take_backs = take_backs and (relaxed or Pruning.CLASSIC_NO_TAKE_BACKS not in prunings)
        # P2: without take-backs, the classic rule makes every foundation move safe.
        self.strict = relaxed or self.take_backs
        self.safe = Pruning.SAFE_FOUNDATION in prunings
        self.canonical = Pruning.CANONICAL in prunings
        self.one_empty = Pruning.ONE_EMPTY_COLUMN in prunings
        self.king_bottom = Pruning.KING_AT_BOTTOM in prunings
        self.dead = Pruning.DEAD_END in prunings
        self.cols = [
            bytes([card + _DOWN for card in column[:down]] + column[down:])
            for column, down in zip(game.columns, game.down, strict=True)
        ]
        self.found = list(game.foundations)
        self.order = _ORDERINGS[0]

    def key(self, cols: list[bytes]) -> bytes:
        return _SEP.join(sorted(cols) if self.canonical else cols)

    def is_dead(self, cols: list[bytes], found: list[int]) -> bool:
        return _dead_end(cols, found, self.relaxed, self.take_backs)

    def run(self, max_nodes: int) -> Verdict:
        cols, found = self.cols, self.found
        seg0: _Line = []
        if self.safe:
            _settle(cols, found, self.strict, seg0)
        if found == _WON:
            return Verdict(SolveStatus.WINNABLE, tuple(_line(seg0)), 0)
        if self.dead and self.is_dead(cols, found):
            return Verdict(SolveStatus.UNWINNABLE, None, 1)
        # A depth-first search can sink its whole budget under one bad early move, which
        # happens in relaxed games (nearly all winnable): there, short searches with other move
        # orderings come first. Each search is complete in itself, so whichever ends first
        # decides; only the last one may run out of budget.
        spent = 0
        if self.relaxed:
            for order in _ORDERINGS:
                if max_nodes - spent <= _TRIAL_NODES:
                    break
                self.order = order
                verdict = self.dfs(cols, found, seg0, _TRIAL_NODES)
                if verdict.status is not SolveStatus.UNKNOWN:
                    return Verdict(verdict.status, verdict.line, spent + verdict.nodes)
                spent += _TRIAL_NODES
            self.order = _ORDERINGS[0]
        verdict = self.dfs(cols, found, seg0, max_nodes - spent)
        return Verdict(verdict.status, verdict.line, spent + verdict.nodes)

    def dfs(self, cols: list[bytes], found: list[int], seg0: _Line, max_nodes: int) -> Verdict:
        """The depth-first search from a settled, live root."""
        # In relaxed games the dead-end check runs at every node; in classic games only where a
        # move can make it fail (see the module docstring, P4).
        check_all = self.dead and self.relaxed
        check_some = self.dead and not self.relaxed
        seen = {self.key(cols)}
        stack: list[tuple[list[bytes], list[int], _Trail, bool]] = [
            (cols, found, (None, tuple(seg0)), False)
        ]
        nodes = 0
        key = self.key
        expand = self.expand
        while stack:
            cols, found, trail, check = stack.pop()
            nodes += 1
            if nodes > max_nodes:
                return Verdict(SolveStatus.UNKNOWN, None, max_nodes)
            if (check_all or (check and check_some)) and nodes > 1 and self.is_dead(cols, found):
                continue
            keep: list[_Child] = []
            for child in expand(cols, found):
                if child[2] == _WON:
                    return self.won((trail, tuple(child[3])), nodes)
                k = key(child[1])
                if k not in seen:
                    seen.add(k)
                    keep.append(child)
            keep.sort(key=_order)
            for _prio, ncols, nfound, seg, chk in keep:
                stack.append((ncols, nfound, (trail, tuple(seg)), chk))
        return Verdict(SolveStatus.UNWINNABLE, None, nodes)

    @staticmethod
    def won(trail: _Trail, nodes: int) -> Verdict:
        segs = []
        while trail is not None:
            trail, seg = trail
            segs.append(seg)
        line = [mv for seg in reversed(segs) for mv in _line(seg)]
        return Verdict(SolveStatus.WINNABLE, tuple(line), nodes)

    def expand(self, cols: list[bytes], found: list[int]) -> list[_Child]:
        """Every successor of a settled state, each with its forced foundation moves played.

        A child is (order, columns, foundations, moves, whether to re-run the dead-end check).
        """
        relaxed, strict, safe = self.relaxed, self.strict, self.safe
        take_backs = self.take_backs
        depth, same_suit, empties = self.order.depth, self.order.same_suit, self.order.empties
        out: list[_Child] = []
        low = min(found)
        empty_done = False
        for j in range(7):
            dst = cols[j]
            if dst:
                top = dst[-1]
                rank = top % 13
                if rank == 0:
                    continue
                sources = RELAXED_BELOW[top] if relaxed else CLASSIC_BELOW[top]
            else:
                if empty_done and self.one_empty:
                    continue
                empty_done = True
                rank = 13
                sources = KINGS
            for x in sources:
                suit = x // 13
                if found[suit] > x % 13:  # x is on its foundation
                    if take_backs and found[suit] == x % 13 + 1:
                        if (
                            safe
                            and strict
                            and all(found[t] >= found[suit] - 1 for t in range(4) if t != suit)
                        ):
                            continue  # the forced moves would bring it straight back
                        ncols = list(cols)
                        ncols[j] = dst + _ONE[x]
                        nfound = list(found)
                        nfound[suit] -= 1
                        out.append((_LAST, ncols, nfound, [(x, j)], True))
                    continue
                for i in range(7):
                    src = cols[i]
                    if x in src:
                        break
                else:
                    continue  # x is face-down
                if i == j:
                    continue  # x lies under its own target
                k = src.index(x)
                if len(src) - k > GROUP_LIMIT:
                    continue
                if k == 0:
                    if rank == 13 and self.king_bottom:
                        continue
                    prio = empties
                elif src[k - 1] >= _DOWN:
                    prio = _REVEAL + depth * k
                elif relaxed and src[k - 1] % 13 == rank:
                    prio = _LAST + 1  # x already lies on a card one rank higher
                elif rank < 13 and top == x + 1:
                    prio = _PLAIN + same_suit
                else:
                    prio = _PLAIN
                ncols = list(cols)
                ncols[j] = dst + src[k:]
                rest = src[:k]
                nfound = found
                seg = [(x, j)]
                if rest:
                    last = rest[-1]
                    if last >= _DOWN:
                        last -= _DOWN
                        rest = rest[:-1] + _ONE[last]
                    ncols[i] = rest
                    if safe and found[last // 13] == last % 13 and (not strict or last % 13 <= low):
                        nfound = list(found)
                        _settle(ncols, nfound, strict, seg)
                else:
                    ncols[i] = rest
                if relaxed:
                    check = True
                elif rank == 13:
                    check = b"" not in ncols
                else:
                    check = False
                    for g in src[k:]:
                        if g % 13 and (g - 1 in dst or g + _DOWN - 1 in dst):
                            check = True
                            break
                out.append((prio, ncols, nfound, seg, check))
        # Foundation moves that were not forced.
        for i in range(7):
            src = cols[i]
            if src:
                top = src[-1]
                suit, rank = divmod(top, 13)
                if found[suit] == rank and not (safe and (not strict or rank <= low)):
                    ncols = list(cols)
                    rest = src[:-1]
                    prio = _HOME
                    if rest and rest[-1] >= _DOWN:
                        rest = rest[:-1] + _FLIP[rest[-1]]
                        prio = _REVEAL + depth * len(rest)
                    ncols[i] = rest
                    nfound = list(found)
                    nfound[suit] = rank + 1
                    seg = [(top, _F)]
                    if safe:
                        _settle(ncols, nfound, strict, seg)
                    out.append((prio, ncols, nfound, seg, True))
        return out


def _order(child: _Child) -> int:
    return child[0]


def _settle(cols: list[bytes], found: list[int], strict: bool, seg: _Line) -> None:
    """Play every safe foundation move (P2), in place, appending them to `seg`."""
    again = True
    while again:
        again = False
        low = min(found)
        for i in range(7):
            col = cols[i]
            while col:
                top = col[-1]
                suit, rank = divmod(top, 13)
                if found[suit] != rank or (strict and rank > low):
                    break
                col = col[:-1]
                if col and col[-1] >= _DOWN:
                    col = col[:-1] + _FLIP[col[-1]]
                found[suit] = rank + 1
                seg.append((top, _F))
                again = True
                low = min(found)
            cols[i] = col


# The events of the dead-end check (P4), one integer each: an event of card c (0-51) is its
# kind's offset plus c, so that the work list is a list of ints.
_EV_FACE_UP: Final = 0
"""F(c): c is or can become face up."""
_EV_END: Final = 52
"""E(c): c can be the last card of its column (usable as a target; may go home next)."""
_EV_HOME: Final = 104
"""H(c): c can reach its foundation."""
_EV_LEFT: Final = 156
"""L(c): c can leave its place in the tableau."""
_EV_EMPTY: Final = 208
"""EMPTY: some column can become empty (a king can move there)."""


def _dead_end(cols: list[bytes], found: list[int], relaxed: bool, take_backs: bool) -> bool:
    """True when the relaxation P4 proves that some card can never reach its foundation.

    Each event (`_EV_FACE_UP` + c, `_EV_END` + c, `_EV_HOME` + c, `_EV_LEFT` + c, `_EV_EMPTY`)
    is pushed once, when it becomes derivable; its consequences are derived when it is popped.
    """
    # Local names of the event offsets: the loop below reads them at every event.
    FACE_UP, END, HOME, LEFT, EMPTY = _EV_FACE_UP, _EV_END, _EV_HOME, _EV_LEFT, _EV_EMPTY
    targets = RELAXED_ABOVE if relaxed else CLASSIC_ABOVE
    sources = RELAXED_BELOW if relaxed else CLASSIC_BELOW
    below = [-1] * 52
    above = [-1] * 52
    col_of = [-1] * 52
    idx = [0] * 52
    f_up = [False] * 52
    end = [False] * 52
    home = [False] * 52
    left = [False] * 52
    avail = [False] * 52  # E(c) has been derived: c is usable as a target
    rank_avail = [False] * 13  # some card of that rank is usable (relaxed)
    n_blocked = [0] * 52
    blocked: dict[int, bool] = {}  # c * 64 + d: target d lies above c in c's column
    waiting: dict[int, list[int]] = {}  # card -> the (c, d) pairs whose condition it can lift
    work: list[int] = []
    push = work.append
    empty = False
    for suit in range(4):
        for c in range(suit * 13, suit * 13 + found[suit]):
            home[c] = left[c] = f_up[c] = True
            if take_backs:  # it may be taken back onto the tableau: optimistically an end
                end[c] = True
                push(END + c)
    for ci in range(7):
        col = cols[ci]
        if not col:
            empty = True
            continue
        prev = -1
        for k, b in enumerate(col):
            c = b & 63
            col_of[c] = ci
            idx[c] = k
            below[c] = prev
            if prev >= 0:
                above[prev] = c
            if b < _DOWN:
                f_up[c] = True
                push(FACE_UP + c)
            prev = c
        end[prev] = True
        push(END + prev)
    for ci in range(7):
        col = cols[ci]
        for k, b in enumerate(col):
            c = b & 63
            for d in targets[c]:
                if col_of[d] == ci and idx[d] > k:
                    pair = c * 64 + d
                    blocked[pair] = True
                    n_blocked[c] += 1
                    for k3 in range(k + 1, idx[d] + 1):
                        e = col[k3] & 63
                        lst = waiting.get(e)
                        if lst is None:
                            waiting[e] = [pair]
                        else:
                            lst.append(pair)
    if empty:
        push(EMPTY)
    pop = work.pop
    while work:
        ev = pop()
        if ev < END:  # F(c)
            c = ev - FACE_UP
            a = above[c]
            if (a < 0 or left[a]) and not end[c]:
                end[c] = True
                push(END + c)
            if not left[c]:
                if c % 13 == 12:
                    ok = empty
                elif not n_blocked[c]:
                    ok = rank_avail[c % 13 + 1] if relaxed else avail[c + 1]
                else:
                    ok = False
                    for d in targets[c]:
                        if avail[d] and not blocked.get(c * 64 + d, False):
                            ok = True
                            break
                if ok:
                    left[c] = True
                    push(LEFT + c)
        elif ev < HOME:  # E(c): c may go home, and is a target for the cards one rank lower
            c = ev - END
            if not home[c] and (c % 13 == 0 or home[c - 1]):
                home[c] = True
                push(HOME + c)
            avail[c] = True
            rank = c % 13
            every = not relaxed or not rank_avail[rank]
            rank_avail[rank] = True
            for c2 in sources[c]:
                if (
                    (every or n_blocked[c2])
                    and not left[c2]
                    and f_up[c2]
                    and not blocked.get(c2 * 64 + c, False)
                ):
                    left[c2] = True
                    push(LEFT + c2)
        elif ev < LEFT:  # H(c)
            c = ev - HOME
            if not left[c]:
                left[c] = True
                push(LEFT + c)
            if c % 13 != 12:
                d = c + 1
                if not home[d] and end[d]:
                    home[d] = True
                    push(HOME + d)
            elif not empty and col_of[c] >= 0 and below[c] < 0:
                empty = True
                push(EMPTY)
        elif ev < EMPTY:  # L(c)
            c = ev - LEFT
            d = below[c]
            if d >= 0:
                if not f_up[d]:
                    f_up[d] = True
                    push(FACE_UP + d)
                elif not end[d]:
                    end[d] = True
                    push(END + d)
            elif not empty and c % 13 != 12 and col_of[c] >= 0:
                empty = True
                push(EMPTY)
            lst = waiting.get(c)
            if lst:
                for pair in lst:
                    if blocked[pair]:
                        blocked[pair] = False
                        c2 = pair >> 6
                        n_blocked[c2] -= 1
                        if not left[c2] and f_up[c2] and avail[pair & 63]:
                            left[c2] = True
                            push(LEFT + c2)
        else:  # EMPTY
            for king in KINGS:
                if not left[king] and f_up[king]:
                    left[king] = True
                    push(LEFT + king)
    return not all(home)
