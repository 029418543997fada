"""WebSocket play and fan-out across two server processes on PostgreSQL.

N players act over WebSocket on process A (random legal moves of their own games, mirrored by a
local engine, as in bench/load.py) while M watchers per game, connected to process B, receive
every action through PostgreSQL NOTIFY. Rounds alternate with the same players acting over HTTP
(bench/load.py's driver) on the same server, so the two can be compared in one run. Prints:

- ws_actions_per_s, ws_p50_ms, ws_p99_ms: send to result over the socket;
- http_actions_per_s: the same players over HTTP;
- fanout_p99_ms (result received by the player -> event received by a watcher on the other
  process: the commit is before the result, so this is the commit-to-watcher time less the
  result's own trip) and fanout_send_p99_ms (send -> watcher, an upper bound).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import statistics
import time

import aiohttp
from load import Player, drive_server, fresh_pg, pct, start, stop

PLAYERS = int(os.environ.get("BENCH_PLAYERS", "64"))
WATCHERS = int(os.environ.get("BENCH_WATCHERS", "4"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "10"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "2"))
PORT_A, PORT_B = 18281, 18282


async def ws_round(seconds: float) -> dict[str, list[float]]:
    base_a, base_b = f"http://127.0.0.1:{PORT_A}", f"http://127.0.0.1:{PORT_B}"
    rng = random.Random(11)
    sent: dict[tuple[str, int], float] = {}
    answered: dict[tuple[str, int], float] = {}
    fanout: list[float] = []
    fanout_send: list[float] = []
    latencies: list[float] = []
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        players = [Player(session, base_a, random.Random(rng.random())) for _ in range(PLAYERS)]
        await asyncio.gather(*(p.sign_up() for p in players))
        await asyncio.gather(*(p.new_game() for p in players))
        versions = {p.game_id: 0 for p in players}

        async def watcher(game_id: str, ready: asyncio.Event) -> None:
            async with session.ws_connect(base_b + "/api/v1/live") as ws:
                await ws.send_json({"type": "watch", "game_id": game_id})
                async for msg in ws:
                    data = json.loads(msg.data)
                    if data["type"] == "watching":
                        ready.set()
                    elif data["type"] == "event":
                        now = time.perf_counter()
                        key = (data["game_id"], data["version"])
                        if key in sent:
                            fanout_send.append(now - sent[key])
                        if key in answered:
                            fanout.append(now - answered[key])

        readies = []
        tasks = []
        for p in players:
            for _ in range(WATCHERS):
                ready = asyncio.Event()
                readies.append(ready)
                tasks.append(asyncio.create_task(watcher(p.game_id, ready)))
        await asyncio.wait_for(asyncio.gather(*(r.wait() for r in readies)), 60)
        deadline = time.perf_counter() + seconds

        async def play(player: Player) -> None:
            async with session.ws_connect(base_a + "/api/v1/live", headers=player.auth) as ws:
                n = 0
                while time.perf_counter() < deadline:
                    body = player.next_action()
                    if body is None:
                        break  # keep the watched game; this player stops
                    n += 1
                    version = versions[player.game_id] + 1
                    t0 = time.perf_counter()
                    sent[(player.game_id, version)] = t0
                    await ws.send_json(
                        {"type": "act", "id": n, "game_id": player.game_id, "action": body}
                    )
                    reply = json.loads((await ws.receive()).data)
                    t1 = time.perf_counter()
                    assert reply["type"] == "result", reply
                    answered[(player.game_id, reply["version"])] = t1
                    versions[player.game_id] = reply["version"]
                    latencies.append(t1 - t0)

        start_t = time.perf_counter()
        await asyncio.gather(*(play(p) for p in players))
        elapsed = time.perf_counter() - start_t
        await asyncio.sleep(1)  # let the last events arrive
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return {
        "rate": [len(latencies) / elapsed],
        "latencies": sorted(latencies),
        "fanout": sorted(fanout),
        "fanout_send": sorted(fanout_send),
    }


async def main() -> None:
    url = await fresh_pg("solitaire_bench_ws")
    args = ["-m", "server", "--database-url", url]
    a = await start(args, PORT_A)
    b = await start(args, PORT_B)
    ws_rates, http_rates, p50s, p99s, fan, fan_send = [], [], [], [], [], []
    try:
        for round_ in range(ROUNDS):
            r = await ws_round(SECONDS)
            ws_rates.append(r["rate"][0])
            p50s.append(pct(r["latencies"], 0.5))
            p99s.append(pct(r["latencies"], 0.99))
            fan.append(pct(r["fanout"], 0.99))
            fan_send.append(pct(r["fanout_send"], 0.99))
            print(
                f"# round {round_ + 1}: ws {ws_rates[-1]:.0f} actions/s, "
                f"fan-out p99 {fan[-1]:.1f} ms",
                flush=True,
            )
            count, _, _ = await drive_server(f"http://127.0.0.1:{PORT_A}", SECONDS)
            http_rates.append(count / SECONDS)
            print(f"# round {round_ + 1}: http {http_rates[-1]:.0f} actions/s", flush=True)
    finally:
        stop(a)
        stop(b)
    print(f"players={PLAYERS}")
    print(f"watchers_per_game={WATCHERS}")
    print(f"ws_actions_per_s={statistics.median(ws_rates):.1f}")
    print(f"ws_p50_ms={statistics.median(p50s):.2f}")
    print(f"ws_p99_ms={statistics.median(p99s):.2f}")
    print(f"http_actions_per_s={statistics.median(http_rates):.1f}")
    print(f"ws_to_http_ratio={statistics.median(ws_rates) / statistics.median(http_rates):.2f}")
    print(f"fanout_p99_ms={statistics.median(fan):.2f}")
    print(f"fanout_send_p99_ms={statistics.median(fan_send):.2f}")


if __name__ == "__main__":
    asyncio.run(main())
