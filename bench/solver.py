"""Solver speed and winnable shares (server/engine/solver.py).

With no arguments: 1,000 random classic deals and 200 random relaxed deals (our rules, take-backs
allowed), each solved once and timed; the classic deals are solved again without take-backs to show
that the share does not change (take-backs never help under the classic rule). The last lines are
`name=value` figures. Targets: every classic deal decided, mean under 5 ms and p99 under 200 ms;
at least 95% of the relaxed deals decided within 1 s each.

`python bench/solver.py --pysol 10000` solves that many random classic deals without take-backs
(PySolFC's rules) and checks that the 95% Wilson interval of the winnable share overlaps the
6.18-7.16% measured by an exhaustive search (about 6.65%); it also solves them with take-backs.

Deals come from seeded `random.Random`s, so every run solves the same deals. Every winning line is
replayed through the engine (outside the timings).
"""

from __future__ import annotations

import argparse
import math
import random
import time
from dataclasses import dataclass, field

from server.engine import DealCode, Game, Rule, Status
from server.engine.solver import SolveStatus, Verdict, solve

CLASSIC_DEALS = 1000
RELAXED_DEALS = 200
RELAXED_MAX_NODES = 50_000  # bounds the run time; the target counts deals decided within 1 s
PYSOL_LOW, PYSOL_HIGH = 0.0618, 0.0716


@dataclass
class Run:
    """The verdicts and times of one batch of deals."""

    times: list[float] = field(default_factory=list)
    statuses: list[SolveStatus] = field(default_factory=list)

    @property
    def n(self) -> int:
        return len(self.times)

    def count(self, status: SolveStatus) -> int:
        return self.statuses.count(status)

    def decided(self, within: float = math.inf) -> int:
        return sum(
            s is not SolveStatus.UNKNOWN and t <= within
            for s, t in zip(self.statuses, self.times, strict=True)
        )

    def mean_ms(self) -> float:
        return 1000 * sum(self.times) / self.n

    def quantile_ms(self, q: float) -> float:
        ordered = sorted(self.times)
        return 1000 * ordered[min(self.n - 1, math.ceil(q * self.n) - 1)]


def wilson(successes: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score interval of a binomial share."""
    p = successes / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return mid - half, mid + half


def check_line(code: DealCode, verdict: Verdict) -> None:
    if verdict.status is SolveStatus.WINNABLE:
        game = Game.deal(code)
        for mv in verdict.line or ():
            game.play(mv)
        if game.status is not Status.WON:
            raise AssertionError(f"{code}: the winning line does not win")


def run(codes: list[DealCode], *, take_backs: bool, max_nodes: int = 200_000) -> Run:
    out = Run()
    perf = time.perf_counter
    for code in codes:
        game = Game.deal(code)
        start = perf()
        verdict = solve(game, take_backs=take_backs, max_nodes=max_nodes)
        out.times.append(perf() - start)
        out.statuses.append(verdict.status)
        check_line(code, verdict)
    return out


def deals(rule: Rule, count: int, seed: int) -> list[DealCode]:
    rng = random.Random(seed)
    return [DealCode.random(rule, rng) for _ in range(count)]


def share_lines(prefix: str, result: Run) -> list[str]:
    won = result.count(SolveStatus.WINNABLE)
    low, high = wilson(won, result.n)
    return [
        f"{prefix}_winnable_share={won / result.n:.4f}",
        f"{prefix}_winnable_wilson95_low={low:.4f}",
        f"{prefix}_winnable_wilson95_high={high:.4f}",
    ]


def time_lines(prefix: str, result: Run) -> list[str]:
    return [
        f"{prefix}_mean_ms={result.mean_ms():.2f}",
        f"{prefix}_p99_ms={result.quantile_ms(0.99):.1f}",
        f"{prefix}_max_ms={result.quantile_ms(1.0):.1f}",
    ]


def main_default() -> None:
    started = time.perf_counter()
    classic_codes = deals(Rule.CLASSIC, CLASSIC_DEALS, 20261130)
    relaxed_codes = deals(Rule.RELAXED, RELAXED_DEALS, 20261201)
    classic = run(classic_codes, take_backs=True)
    classic_no_tb = run(classic_codes, take_backs=False)
    relaxed = run(relaxed_codes, take_backs=True, max_nodes=RELAXED_MAX_NODES)
    same = classic.statuses == classic_no_tb.statuses
    classic_ok = (
        classic.decided() == classic.n and classic.mean_ms() < 5 and classic.quantile_ms(0.99) < 200
    )
    relaxed_ok = relaxed.decided(within=1.0) >= 0.95 * relaxed.n
    lines = [
        f"classic_deals={classic.n}",
        f"classic_decided_share={classic.decided() / classic.n:.4f}",
        *time_lines("classic", classic),
        *share_lines("classic", classic),
        *share_lines("classic_no_take_backs", classic_no_tb),
        f"classic_same_verdicts_without_take_backs={same}",
        f"classic_targets_met={classic_ok}",
        f"relaxed_deals={relaxed.n}",
        f"relaxed_decided_share={relaxed.decided() / relaxed.n:.4f}",
        f"relaxed_decided_within_1s_share={relaxed.decided(within=1.0) / relaxed.n:.4f}",
        *time_lines("relaxed", relaxed),
        *share_lines("relaxed", relaxed),
        f"relaxed_unwinnable={relaxed.count(SolveStatus.UNWINNABLE)}",
        f"relaxed_targets_met={relaxed_ok}",
        f"seconds={time.perf_counter() - started:.1f}",
    ]
    print("\n".join(lines))


def main_pysol(count: int) -> None:
    started = time.perf_counter()
    codes = deals(Rule.CLASSIC, count, 6650)
    pysol = run(codes, take_backs=False)
    ours = run(codes, take_backs=True)
    won = pysol.count(SolveStatus.WINNABLE)
    low, high = wilson(won, count)
    lines = [
        f"pysol_deals={count}",
        f"pysol_decided_share={pysol.decided() / count:.4f}",
        *time_lines("pysol", pysol),
        *share_lines("pysol", pysol),
        f"pysol_reference_low={PYSOL_LOW}",
        f"pysol_reference_high={PYSOL_HIGH}",
        f"pysol_overlaps_reference={low <= PYSOL_HIGH and high >= PYSOL_LOW}",
        f"with_take_backs_decided_share={ours.decided() / count:.4f}",
        *share_lines("with_take_backs", ours),
        f"same_verdicts_with_take_backs={ours.statuses == pysol.statuses}",
        f"seconds={time.perf_counter() - started:.1f}",
    ]
    print("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--pysol",
        type=int,
        metavar="N",
        help="solve N random classic deals without take-backs (PySolFC's rules)",
    )
    args = parser.parse_args()
    if args.pysol is not None:
        if args.pysol < 1:
            parser.error("--pysol needs a positive number of deals")
        main_pysol(args.pysol)
    else:
        main_default()


if __name__ == "__main__":
    main()
