"""What dealt the games of replays and exports (SPEC 1.8.2): each game's `seed` member.

A solo game's seed comes from its row and, once its pair has been rotated away, the pair's
revealed server seed (one statement for a whole export batch); a race game's is its race's
(`RaceService.seed_info`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aiohttp import web

from server.api.render import replay_seed_json
from server.keys import CLOCK, RACES, SEEDS
from server.services.values import GameView
from server.store.records import LoggedMove

Seeded = tuple[GameView, Sequence[LoggedMove], dict[str, Any] | None]


async def seeds_of(app: web.Application, views: Sequence[GameView]) -> list[dict[str, Any] | None]:
    """The `seed` member of each game's replay, in order."""
    now = app[CLOCK]()
    wanted = [
        v.row.seed_pair_id
        for v in views
        if v.row.seed_pair_id is not None and v.row.code_revealed(now)
    ]
    revealed = await app[SEEDS].revealed(sorted(set(wanted))) if wanted else {}
    races: dict[str, dict[str, Any] | None] = {}
    out: list[dict[str, Any] | None] = []
    for view in views:
        row = view.row
        if row.race_id is not None:  # the race's seed (SPEC 1.8.2), read once per race
            if row.race_id not in races:
                races[row.race_id] = await app[RACES].seed_info(row.race_id)
            out.append(races[row.race_id])
            continue
        pair = row.seed_pair_id
        out.append(replay_seed_json(row, revealed.get(pair) if pair else None, now))
    return out


async def seeded(
    app: web.Application, batch: Sequence[tuple[GameView, Sequence[LoggedMove]]]
) -> list[Seeded]:
    """An export's batch with each game's seed."""
    seeds = await seeds_of(app, [view for view, _ in batch])
    return [(view, log, seed) for (view, log), seed in zip(batch, seeds, strict=True)]
