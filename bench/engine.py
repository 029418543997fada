"""Engine speed on one core: legal-move listings/s and applied actions/s.

Positions come from random play over many seeded deals (both rules). Applied actions are random
legal moves (and an occasional undo) with the undo history kept, as in a real game. Run with no
arguments; the last lines are `name=value` figures.
"""

from __future__ import annotations

import random
import time

from server.engine import DealCode, Game, Rule


def random_positions(count: int, rng: random.Random) -> list[Game]:
    positions: list[Game] = []
    while len(positions) < count:
        rule = Rule.CLASSIC if rng.random() < 0.5 else Rule.RELAXED
        game = Game.deal(DealCode.random(rule, rng))
        for _ in range(rng.randrange(0, 60)):
            moves = game.legal_moves()
            if not moves:
                break
            mv = rng.choice(moves)
            game.apply(mv.card, mv.to)
        positions.append(game)
    return positions


def bench_listings(positions: list[Game], seconds: float) -> float:
    done = 0
    start = time.perf_counter()
    while True:
        for game in positions:
            game.legal_moves()
        done += len(positions)
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return done / elapsed


def bench_apply(rng: random.Random, seconds: float) -> tuple[float, float]:
    """Random games; returns (applied actions/s counting only apply/undo time, overall/s)."""
    applied = 0
    apply_time = 0.0
    start = time.perf_counter()
    perf = time.perf_counter
    while perf() - start < seconds:
        game = Game.deal(DealCode.random(Rule.CLASSIC if rng.random() < 0.5 else Rule.RELAXED, rng))
        plan = []
        for _ in range(200):
            moves = game.legal_moves()
            if not moves:
                break
            plan.append(rng.choice(moves))
            game.apply(plan[-1].card, plan[-1].to)
        # Replay the same plan from a fresh deal, timing only the applied actions, with an undo
        # and redo every tenth move so the history is exercised too.
        game = Game.deal(game.code)
        t0 = perf()
        apply = game.apply
        undo = game.undo
        for i, mv in enumerate(plan):
            apply(mv.card, mv.to)
            if i % 10 == 9:
                undo()
                apply(mv.card, mv.to)
                applied += 2
        apply_time += perf() - t0
        applied += len(plan)
    return applied / apply_time, applied / (perf() - start)


def main() -> None:
    rng = random.Random(20261130)
    positions = random_positions(2000, rng)
    listings = bench_listings(positions, 5.0)
    applied, with_listing = bench_apply(rng, 5.0)
    print(f"positions={len(positions)}")
    print(f"legal_move_listings_per_s={listings:.0f}")
    print(f"applied_actions_per_s={applied:.0f}")
    print(f"random_play_actions_per_s_including_listing={with_listing:.0f}")


if __name__ == "__main__":
    main()
