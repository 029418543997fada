"""A race as read: its row, its seats, its games, and the standings they make (SPEC 2.6.1).

Plain values, shared by the race service, the store and the views.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from server.engine.snapshot import foundation_cards
from server.store.records import GameRecord, RaceRecord, Seat


@dataclass(frozen=True, slots=True)
class Standing:
    player_id: str
    name: str
    status: str
    foundation_cards: int
    ranked_score: int
    moves: int
    elapsed_ms: int
    finished_ms: int | None
    place: int
    rating: tuple[float, float, float, float] | None
    """(mu before, sigma before, mu after, sigma after) once the race has ended."""


@dataclass(frozen=True, slots=True)
class RaceView:
    """A race as read at `now_ms`, with its seats and its games."""

    race: RaceRecord
    seats: list[Seat]
    games: list[GameRecord]
    last_actions: dict[str, int]
    now_ms: int
    creator_name: str
    server_seed: str | None = None
    """The race's server seed (hex), read once the race has finished (SPEC 1.8.2)."""

    @property
    def status(self) -> str:
        race = self.race
        if (
            race.status == "starting"
            and race.starts_ms is not None
            and self.now_ms >= race.starts_ms
        ):
            return "running"
        return race.status

    @property
    def version(self) -> int:
        """Grows with every change: of the race row, and of each of its games."""
        return self.race.version + sum(g.version for g in self.games)

    def standings(self) -> list[Standing]:
        race = self.race
        by_game = {g.id: g for g in self.games}
        rows = []
        for seat in self.seats:
            game = by_game.get(seat.game_id or "")
            if game is None:
                continue
            if game.elapsed_ms is not None:
                elapsed = game.elapsed_ms
            elif race.starts_ms is not None:  # the clock stops at the deadline
                now = min(self.now_ms, race.starts_ms + race.time_limit_s * 1000)
                elapsed = max(0, now - race.starts_ms)
            else:
                elapsed = 0
            rows.append((seat, game, elapsed))
        keys = {
            seat.player_id: place_key(
                game, foundation_cards(game.snapshot), elapsed, self.last_actions.get(game.id)
            )
            for seat, game, elapsed in rows
        }
        places = places_of(keys)
        out = []
        for seat, game, elapsed in rows:
            rating = None
            if seat.mu_after is not None:
                assert seat.mu_before is not None and seat.sigma_before is not None
                assert seat.sigma_after is not None
                rating = (seat.mu_before, seat.sigma_before, seat.mu_after, seat.sigma_after)
            out.append(
                Standing(
                    seat.player_id,
                    seat.name,
                    game.status,
                    foundation_cards(game.snapshot),
                    game.ranked_score,
                    game.moves,
                    elapsed,
                    game.finished_ms,
                    seat.place if seat.place is not None else places[seat.player_id],
                    rating,
                )
            )
        out.sort(key=lambda s: (s.place, keys[s.player_id], s.player_id))
        return out


def place_key(
    game: GameRecord, cards: int, elapsed: int, last_action: int | None
) -> tuple[Any, ...]:
    """The order of a race (SPEC 2.6.1): won games by time, then moves; then the rest by
    foundation cards, then ranked score, then the earlier last action (none ranks after)."""
    if game.status == "won":
        return (0, elapsed, game.moves, 0, 0)
    none_last = (1, 0) if last_action is None else (0, last_action)
    return (1, -cards, -game.ranked_score, *none_last)


def places_of(keys: dict[str, tuple[Any, ...]]) -> dict[str, int]:
    """Places 1, 2, 2, 4: exact ties share a place."""
    order = sorted(keys.items(), key=lambda item: item[1])
    places: dict[str, int] = {}
    for index, (player_id, key) in enumerate(order):
        if index and key == order[index - 1][1]:
            places[player_id] = places[order[index - 1][0]]
        else:
            places[player_id] = index + 1
    return places
