"""`python -m server.tools.certify`: certify a range of seeds with the solver, for a pool of deals.

    python -m server.tools.certify --rule classic --start 0 --count 10000 [--no-take-backs]
                           [--max-nodes 300000] [--workers 2] [--database-url URL]

Shows a progress bar on a terminal (a line every 10% otherwise), prints a summary with the
winnable share and its 95% Wilson interval, and with `--database-url` stores every verdict in
the database's `deal_verdicts` (the cache the server reads, migrated first).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import multiprocessing
import sys
import time
from collections import Counter

from server.engine import DealCode, Rule
from server.engine.codes import SEED_LIMIT
from server.engine.solver import solve_deal
from server.store import deals as deal_rows


def certify(job: tuple[str, bool, int]) -> tuple[str, str, int]:
    code, take_backs, max_nodes = job
    verdict = solve_deal(DealCode.parse(code), take_backs=take_backs, max_nodes=max_nodes)
    return code, verdict.status.value, verdict.nodes


def wilson(successes: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    if n == 0:
        return 0.0, 0.0
    p = successes / n
    centre = p + z * z / (2 * n)
    margin = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    denominator = 1 + z * z / n
    return (centre - margin) / denominator, (centre + margin) / denominator


def progress(done: int, total: int, counts: Counter[str], started: float, tty: bool) -> None:
    elapsed = time.monotonic() - started
    rate = done / elapsed if elapsed > 0 else 0.0
    summary = (
        f"{done}/{total}  winnable {counts['winnable']}  unwinnable {counts['unwinnable']}  "
        f"unknown {counts['unknown']}  {rate:.0f}/s"
    )
    if tty:
        width = 30
        filled = int(width * done / total) if total else width
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {summary}")
        sys.stderr.flush()
    elif total and (done == total or done % max(1, total // 10) == 0):
        print(summary, file=sys.stderr, flush=True)


async def store(url: str, rows: list[tuple[str, str, int]], take_backs: bool) -> None:
    from sqlalchemy.exc import IntegrityError

    from server.store.db import make_engine, migrate_async, sessionmakers

    await migrate_async(url)
    engine = make_engine(url)
    _, writers = sessionmakers(engine)
    now = int(time.time() * 1000)
    try:
        for code, status, nodes in rows:
            try:
                async with writers.begin() as session:
                    await deal_rows.insert_deal_verdict(
                        session, code, take_backs, status, nodes, now
                    )
            except IntegrityError:
                pass  # already certified
    finally:
        await engine.dispose()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m server.tools.certify",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--rule", choices=[r.value for r in Rule], default="classic")
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--no-take-backs", action="store_true")
    parser.add_argument("--max-nodes", type=int, default=300_000)
    parser.add_argument("--workers", type=int, default=max(1, multiprocessing.cpu_count()))
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args(argv)
    if not 0 <= args.start < SEED_LIMIT or args.count < 1 or args.start + args.count > SEED_LIMIT:
        parser.error(f"seeds must lie in 0..{SEED_LIMIT - 1}")
    take_backs = not args.no_take_backs
    rule = Rule(args.rule)
    jobs = [
        (str(DealCode(rule, seed)), take_backs, args.max_nodes)
        for seed in range(args.start, args.start + args.count)
    ]
    counts: Counter[str] = Counter()
    rows: list[tuple[str, str, int]] = []
    tty = sys.stderr.isatty()
    started = time.monotonic()
    with multiprocessing.get_context("spawn").Pool(args.workers) as pool:
        for row in pool.imap(certify, jobs, chunksize=16):
            rows.append(row)
            counts[row[1]] += 1
            progress(len(rows), len(jobs), counts, started, tty)
    if tty:
        sys.stderr.write("\n")
    decided = counts["winnable"] + counts["unwinnable"]
    low, high = wilson(counts["winnable"], decided)
    print(f"deals={len(rows)}")
    print(f"decided={decided}")
    print(f"winnable={counts['winnable']}")
    print(f"unwinnable={counts['unwinnable']}")
    print(f"unknown={counts['unknown']}")
    print(f"winnable_share={counts['winnable'] / decided if decided else 0:.4f}")
    print(f"wilson95=[{low:.4f}, {high:.4f}]")
    print(f"seconds={time.monotonic() - started:.1f}")
    if args.database_url:
        asyncio.run(store(args.database_url, rows, take_backs))
        print(f"stored={len(rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
