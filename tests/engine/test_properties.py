"""Properties of the engine over random deals and random play (hypothesis)."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from server.engine import (
    CARDS,
    UNDO,
    UNDO_LIMIT,
    WIN_SCORE,
    DealCode,
    Game,
    IllegalMove,
    Move,
    Rule,
    Status,
    Undo,
    replay,
    snapshot,
)
from server.engine.cards import FOUNDATION
from server.engine.messages import RULES
from tests.engine.helpers import load_data, state

SEED_LIMIT = 26**7
PLACES = range(FOUNDATION + 1)
GAMES = load_data("games.json")["games"]

seeds = st.integers(0, SEED_LIMIT - 1)
rules = st.sampled_from(list(Rule))


@st.composite
def pick_lists(draw: st.DrawFn, max_len: int = 300) -> list[int]:
    """A list of choices long enough to pass the 100-move undo limit; each is an index into
    legal_moves() + [undo], taken modulo its length. Drawn as a length and a random seed so
    that long games are common (hypothesis keeps plain lists short)."""
    n = draw(st.integers(0, max_len))
    rng = random.Random(draw(st.integers(0, 2**32)))
    return [rng.randrange(2**16) for _ in range(n)]


picks = pick_lists()

PLAY = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FEW = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def deal(code: DealCode) -> Game:
    """Deal `code`, noting it for the report of a failing example."""
    note(f"deal {code}")
    return Game.deal(code)


def play(game: Game, action: Move | Undo) -> None:
    """Play `action`, noting it: the notes of a failing example replay it move by move."""
    note(f"play {action}")
    game.play(action)


def check_invariants(game: Game) -> None:
    cards = list(game.cards())
    assert sorted(cards) == list(range(52)), "every card exactly once"
    assert len(game.columns) == 7 and len(game.down) == 7 and len(game.foundations) == 4
    for col, down in zip(game.columns, game.down, strict=True):
        if col:
            assert 0 <= down < len(col), "the last card of a column is face-up"
        else:
            assert down == 0
    for s, n in enumerate(game.foundations):
        assert 0 <= n <= 13
        for r in range(n):
            assert game.where[s * 13 + r] == FOUNDATION
    for ci, col in enumerate(game.columns):
        for card in col:
            assert game.where[card] == ci
    assert game.score >= 0
    check_ranked(game)
    hidden = game.tableau_view()
    assert sum(card is None for col in hidden for card in col) == sum(game.down)
    assert len(game.history) <= UNDO_LIMIT
    if game.foundations == [13, 13, 13, 13]:
        assert game.status is Status.WON


def check_ranked(game: Game) -> None:
    """The ranked score of a position played from a deal (SPEC 1.5)."""
    home = {s * 13 + r for s, n in enumerate(game.foundations) for r in range(n)}
    reached = {card for card in range(52) if game.reached >> card & 1}
    assert game.reached >> 52 == 0
    assert home <= reached, "every card on a foundation has reached it"
    assert game.ranked_score == 10 * len(reached) + 5 * (21 - sum(game.down))
    assert 0 <= game.ranked_score <= game.score
    assert game.ranked_score <= WIN_SCORE == 625
    if game.status is Status.WON:
        assert game.ranked_score == 625


def expected_score_delta(before: Game, after: Game) -> int:
    """+10 for a card put on a foundation, +5 for each card turned face-up, 0 for a take-back."""
    placed = max(0, sum(after.foundations) - sum(before.foundations))
    flipped = sum(before.down) - sum(after.down)
    assert flipped in (0, 1)
    return 10 * placed + 5 * flipped


def expected_double_tap(game: Game, card: int, moves: list[Move]) -> Move | None:
    """SPEC 1.7, computed from the legal moves only."""
    legal = [m.to for m in moves if m.card == card]
    if FOUNDATION in legal:
        return Move(CARDS[card], FOUNDATION)
    fitting = [to for to in legal if game.columns[to]]
    if fitting:
        best = max(fitting, key=lambda to: (len(game.columns[to]), -to))
        return Move(CARDS[card], best)
    empty = [to for to in legal if not game.columns[to]]
    if empty and card % 13 == 12:
        return Move(CARDS[card], min(empty))
    return None


@PLAY
@given(seeds, rules, picks)
def test_random_play_keeps_the_invariants(seed: int, rule: Rule, choices: list[int]) -> None:
    game = deal(DealCode(rule, seed))
    check_invariants(game)
    assert sum(game.down) == 21
    undo_stack: list[tuple[object, ...]] = []
    total_moves = 0
    for pick in choices:
        legal = game.legal_moves()
        assert len(set(legal)) == len(legal), "no move listed twice"
        action = [*legal, UNDO][pick % (len(legal) + 1)]
        before = game.copy()
        assert before == game
        history = list(game.history)
        if action is UNDO:
            if not history:
                try:
                    game.undo()
                except IllegalMove as exc:
                    active = game.status is Status.ACTIVE
                    assert exc.rule == ("nothing_to_undo" if active else "game_over")
                else:
                    raise AssertionError("undo with nothing to undo was accepted")
                assert game == before
                continue
            play(game, UNDO)
            assert state(game) == undo_stack.pop(), "undo restores the previous state"
            assert list(game.history) == history[:-1]
            assert game.moves == before.moves, "undo does not change the move counter"
        else:
            assert isinstance(action, Move)
            play(game, action)
            total_moves += 1
            undo_stack.append(state(before))
            assert game.moves == before.moves + 1 == total_moves
            assert game.score == before.score + expected_score_delta(before, game)
            if game.status is Status.ACTIVE:
                assert len(game.history) == min(len(history) + 1, UNDO_LIMIT)
                if len(history) == UNDO_LIMIT:
                    assert list(game.history)[:-1] == history[1:]
                else:
                    assert list(game.history)[:-1] == history
            else:
                assert game.status is Status.WON
                assert game.score >= 625
        check_invariants(game)


@PLAY
@given(seeds, rules, pick_lists(150))
def test_legal_moves_refusals_and_targets_agree(seed: int, rule: Rule, choices: list[int]) -> None:
    game = deal(DealCode(rule, seed))
    for step, pick in enumerate([*choices, None]):
        legal = game.legal_moves()
        legal_set = {(int(m.card), m.to) for m in legal}
        if step % 4 == 0 or pick is None:
            key = game.key()
            for card in range(52):
                for to in PLACES:
                    rule_id = game.refusal(card, to)
                    if (card, to) in legal_set:
                        assert rule_id is None, (CARDS[card], to)
                    else:
                        assert isinstance(rule_id, str), (CARDS[card], to)
                        assert rule_id in RULES
                        try:
                            game.apply(card, to)
                        except IllegalMove as exc:
                            assert exc.rule == rule_id
                        else:
                            raise AssertionError(f"{CARDS[card]}-{to} accepted, not listed")
                targets = game.targets(card)
                assert targets == sorted(to for c, to in legal_set if c == card)
                if not game.is_face_up(card):
                    assert targets == []
                    assert {game.refusal(card, to) for to in PLACES} == {"face_down"}
            assert game.key() == key, "a refused move changed nothing"
            for move in legal:
                trial = game.copy()
                trial.apply(move.card, move.to)
                assert trial.moves == game.moves + 1
        if pick is None:
            break
        action = [*legal, UNDO][pick % (len(legal) + 1)]
        if action is UNDO and not game.history:
            continue
        play(game, action)


@PLAY
@given(seeds, rules, pick_lists(100))
def test_tap_and_double_tap(seed: int, rule: Rule, choices: list[int]) -> None:
    game = deal(DealCode(rule, seed))
    for pick in [*choices, None]:
        legal = game.legal_moves()
        for card in range(52):
            to_foundation = Move(CARDS[card], FOUNDATION)
            try:
                tapped = game.resolve_tap(card)
            except IllegalMove as exc:
                assert to_foundation not in legal
                assert exc.rule == game.refusal(card, FOUNDATION)
            else:
                assert tapped == to_foundation
                assert tapped in legal
            expected = expected_double_tap(game, card, legal)
            try:
                chosen = game.resolve_double_tap(card)
            except IllegalMove as exc:
                assert expected is None, (CARDS[card], expected)
                assert exc.rule in ("no_place", "face_down", "foundation_top", "game_over")
            else:
                assert chosen == expected
                assert chosen in legal
        if pick is None:
            break
        action = [*legal, UNDO][pick % (len(legal) + 1)]
        if action is UNDO and not game.history:
            continue
        play(game, action)


@PLAY
@given(seeds, rules, pick_lists(200), st.integers(1, 10))
def test_snapshot_round_trips_and_continues(
    seed: int, rule: Rule, choices: list[int], every: int
) -> None:
    game = deal(DealCode(rule, seed))
    twin = snapshot.loads(snapshot.dumps(game))
    for step, pick in enumerate(choices):
        if step % every == 0:
            text = snapshot.dumps(game)
            twin = snapshot.loads(text)
            assert twin == game
            assert snapshot.dumps(twin) == text
            assert twin is not game
        assert twin.legal_moves() == game.legal_moves()
        assert twin.undo_available == game.undo_available
        legal = game.legal_moves()
        action = [*legal, UNDO][pick % (len(legal) + 1)]
        if action is UNDO and not game.history:
            for g in (game, twin):
                try:
                    g.undo()
                except IllegalMove as exc:
                    assert exc.rule == "nothing_to_undo"
                else:
                    raise AssertionError("undo accepted")
            continue
        play(game, action)
        twin.play(action)
        assert twin == game
        assert twin.tableau_view(reveal=True) == game.tableau_view(reveal=True)
    # The restored game undoes as far back as the original.
    twin = snapshot.loads(snapshot.dumps(game))
    while game.undo_available:
        game.undo()
        twin.undo()
        assert twin == game
    assert twin.undo_available == 0


def take_back_biased(game: Game, legal: list[Move], pick: int) -> Move | Undo:
    """Like `[*legal, UNDO][pick % ...]`, but one pick in four prefers a take-back or the move
    home of a card just taken back, so that take-back cycles are common."""
    if pick % 4 == 0 and game.history:
        last = game.history[-1]
        again = [m for m in legal if m.to == FOUNDATION and last[0] == 2 and m.card == last[1]]
        back = [m for m in legal if game.where[m.card] == FOUNDATION]
        if again or back:
            return (again or back)[pick // 4 % len(again or back)]
    return [*legal, UNDO][pick % (len(legal) + 1)]


@PLAY
@given(seeds, rules, picks)
def test_ranked_score_is_that_of_the_line_without_its_undone_moves(
    seed: int, rule: Rule, choices: list[int]
) -> None:
    """After any sequence of moves and undos, the ranked score counts 10 for each card that a
    move of the current line (the moves not undone) put on its foundation, once, plus 5 for
    each card turned face-up; the score counts every such move. Replaying the line from the
    deal gives the same game state."""
    game = deal(DealCode(rule, seed))
    line: list[Move] = []
    for step, pick in enumerate(choices):
        legal = game.legal_moves()
        action = take_back_biased(game, legal, pick)
        if isinstance(action, Undo):
            if not game.undo_available:
                continue
            play(game, action)
            line.pop()
        else:
            play(game, action)
            line.append(action)
        homes = [m.card for m in line if m.to == FOUNDATION]
        turned = 21 - sum(game.down)
        assert game.reached == sum(1 << card for card in set(homes))
        assert game.ranked_score == 10 * len(set(homes)) + 5 * turned
        assert game.score == 10 * len(homes) + 5 * turned
        check_ranked(game)
        if step % 25 == 0 or step == len(choices) - 1:
            again = replay(game.code, line).game
            assert state(again) == state(game)
            assert (again.ranked_score, again.reached) == (game.ranked_score, game.reached)
            if game.status is Status.ACTIVE:  # the history is the end of the line's
                kept = len(game.history)
                assert list(again.history)[len(again.history) - kept :] == list(game.history)


@PLAY
@given(seeds, pick_lists(150))
def test_classic_moves_are_relaxed_moves(seed: int, choices: list[int]) -> None:
    """Relaxed only removes the suit condition: every classic move stays legal."""
    game = deal(DealCode(Rule.CLASSIC, seed))
    for step, pick in enumerate(choices):
        legal = game.legal_moves()
        relaxed = Game(
            game.code.with_rule(Rule.RELAXED),
            [list(col) for col in game.columns],
            list(game.down),
            list(game.foundations),
        )
        assert set(legal) <= set(relaxed.legal_moves())
        for card in range(52) if step % 4 == 0 else ():
            for to in range(7):
                if relaxed.refusal(card, to) == "rank":
                    assert game.refusal(card, to) == "same_suit"
        action = [*legal, UNDO][pick % (len(legal) + 1)]
        if action is UNDO and not game.history:
            continue
        play(game, action)


@FEW
@given(st.data())
def test_undo_and_redo_anywhere_keeps_a_clean_win_at_625(data: st.DataObject) -> None:
    record = data.draw(st.sampled_from([g for g in GAMES if "note" not in g]))
    actions: list[str] = record["actions"]
    redo_at = data.draw(
        st.lists(st.integers(0, len(actions) - 1), max_size=10, unique=True), label="redo_at"
    )
    game = deal(DealCode.parse(record["code"]))
    for index, text in enumerate(actions):
        move = Move.parse(text)
        play(game, move)
        if index in redo_at and game.status is Status.ACTIVE:
            play(game, UNDO)
            play(game, move)
    assert game.status is Status.WON
    assert game.score == game.ranked_score == 625
    extra = sum(1 for i in redo_at if i != len(actions) - 1)
    assert game.moves == len(actions) + extra
    assert replay(record["code"], actions).game.score == 625
