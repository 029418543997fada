"""GameService's one change path, driven directly: what a player relies on when another process
changes the same game at the same time (no move lost, none applied twice) and when a request
with an Idempotency-Key is retried (answered from its record)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from server.engine import DealCode, Game, Move, Rule, Status
from server.services.values import ActionRequest, Principal
from server.store.commits import Committer, GameCommit, Outcome
from tests.services.conftest import Services

CODE = DealCode(Rule.CLASSIC, 12345, 2)


def two_moves() -> tuple[Move, Move]:
    """Two different moves of CODE's deal, each legal at the deal and the second after the
    first too (two players' worth of changes that do not refuse each other)."""
    start = Game.deal(CODE)
    for first in start.legal_moves():
        after = start.copy()
        after.play(first)
        for second in start.legal_moves():
            if second != first and second in after.legal_moves():
                return first, second
    raise AssertionError("no such pair of moves")


def request(move: Move) -> ActionRequest:
    return ActionRequest("move", move.card, move.to)


@dataclass
class Interfering:
    """A committer that wraps the real one and, on its first commit, first lets `before` run
    (another writer's change); every later commit is the real one's."""

    real: Committer
    before: Callable[[GameCommit], Awaitable[Outcome | None]] | None = None
    """Runs before the first commit; an outcome it returns is that commit's (nothing is
    committed by the real committer then)."""
    seen: list[Outcome] = field(default_factory=list)

    async def commit(self, c: GameCommit) -> Outcome:
        before, self.before = self.before, None
        if before is not None:
            forced = await before(c)
            if forced is not None:
                self.seen.append(forced)
                return forced
        outcome = await self.real.commit(c)
        self.seen.append(outcome)
        return outcome

    async def close(self) -> None:
        await self.real.close()


async def log_of(services: Services, player: Principal, game_id: str) -> list[str]:
    view, log = await services.games.move_log(game_id, player)
    assert [entry.seq for entry in log] == list(range(1, view.row.version + 1))
    return [entry.move for entry in log]


async def test_an_action_is_applied_once_with_a_version_and_a_log_entry(
    services: Services,
) -> None:
    ana = await services.player("ana")
    first, _ = two_moves()
    view = await services.games.create_game(ana, None, CODE)
    assert (view.row.rule, view.row.status, view.row.version) == (Rule.CLASSIC, Status.ACTIVE, 0)
    applied = await services.games.act(ana, view.row.id, request(first))
    assert (applied.move, applied.view.row.version, applied.replayed) == (str(first), 1, False)
    assert await log_of(services, ana, view.row.id) == [str(first)]
    stored = await services.games.get_game(view.row.id, ana)
    assert stored.row == applied.view.row


async def test_a_stale_version_is_decided_again_and_no_move_is_lost(services: Services) -> None:
    """Another process changes the game between this one's decision and its commit: the commit
    finds the game at another version (STALE), the service reads it again, decides again on the
    new position and commits after it. Both moves are in the log, each once."""
    ana = await services.player("ana")
    first, second = two_moves()
    game_id = (await services.games.create_game(ana, None, CODE)).row.id
    await services.games.get_game(game_id, ana)
    await services.games.act(ana, game_id, request(first))  # this process has the game cached
    await services.games.act(ana, game_id, ActionRequest("undo"))

    other = services.another_process()
    interfering = Interfering(services.committer)

    async def other_writer_first(_c: GameCommit) -> None:
        await other.act(ana, game_id, request(first))
        return None

    interfering.before = other_writer_first
    services.games.committer = interfering
    applied = await services.games.act(ana, game_id, request(second))

    assert interfering.seen == [Outcome.STALE, Outcome.COMMITTED]
    assert applied.view.row.version == 4
    assert await log_of(services, ana, game_id) == [str(first), "undo", str(first), str(second)]
    # The cache holds what was committed, not the stale decision.
    assert services.games.cache.slot(game_id).view == applied.view
    assert (await services.games.get_game(game_id, ana)).row == applied.view.row


async def test_a_taken_idempotency_key_is_answered_from_its_record(services: Services) -> None:
    """The same keyed request commits in another process first (a retry that raced its
    original): this one's commit finds the key taken, and the player gets the stored answer,
    marked replayed; the move is applied once."""
    ana = await services.player("ana")
    first, _ = two_moves()
    game_id = (await services.games.create_game(ana, None, CODE)).row.id
    interfering = Interfering(services.committer)

    async def same_request_elsewhere(c: GameCommit) -> Outcome:
        assert c.record is not None
        assert await services.committer.commit(c) is Outcome.COMMITTED
        return Outcome.KEY_TAKEN

    interfering.before = same_request_elsewhere
    services.games.committer = interfering
    applied = await services.games.act(ana, game_id, request(first), "key-1")

    assert interfering.seen == [Outcome.KEY_TAKEN]
    assert applied.replayed
    assert (applied.move, applied.view.row.version) == (str(first), 1)
    assert await log_of(services, ana, game_id) == [str(first)]

    # A later retry with the key is answered from the record too, and still applies nothing.
    again = await services.games.act(ana, game_id, request(first), "key-1")
    assert again.replayed and again.view.row == applied.view.row
    assert await log_of(services, ana, game_id) == [str(first)]


async def test_a_retried_key_on_a_stale_cache_is_answered_from_its_record(
    services: Services,
) -> None:
    """The original request committed in another process: this one's cached view is behind, the
    action no longer fits it, and the answer is the record's, not a refusal."""
    ana = await services.player("ana")
    first, _ = two_moves()
    game_id = (await services.games.create_game(ana, None, CODE)).row.id
    other = services.another_process()
    original = await other.act(ana, game_id, request(first), "key-2")
    retried = await services.games.act(ana, game_id, request(first), "key-2")
    assert retried.replayed and not original.replayed
    assert retried.view.row == original.view.row
    assert await log_of(services, ana, game_id) == [str(first)]
