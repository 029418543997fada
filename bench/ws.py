"""WebSocket play beside HTTP play, keyed and keyless, and fan-out across two server processes.

Two server processes (`python -m server`, RATE_LIMIT=0) share a fresh PostgreSQL database
`solitaire_bench_ws` on $BENCH_PG_URL's server. Each round makes four measurements of
BENCH_SECONDS on process A, with BENCH_PLAYERS (64) fresh players each playing random legal
moves of its own game (mirrored by a local engine, as in bench/load.py; a player whose game is
over starts another):

- `ws` keyed: each player acts over its own WebSocket (`act` messages, one at a time) and sends
  a fresh `idempotency_key` (uuid4) with every action, as the web client does; BENCH_WATCHERS
  (4) watchers per game, connected to process B, receive every action through PostgreSQL
  NOTIFY;
- `http` keyed: the same players' moves over HTTP (bench/load.py's driver) with a fresh
  `Idempotency-Key` header on every action;
- `ws` and `http` keyless: the same without keys.

The order is ws keyed, http keyed, ws keyless, http keyless in odd rounds and the reverse in
even rounds: the machine is shared, so compare ratios within one run, not figures across runs.
All four use one seed: the same deals and moves. Printed last as `name=value` lines
(medians over the rounds):

- `ws_keyed_actions_per_s`, `ws_keyed_p50_ms`, `ws_keyed_p99_ms` (send to result over the
  socket), and the same for `ws_keyless_*`, `http_keyed_*`, `http_keyless_*` (request to
  response);
- `ws_to_http_keyed`, `ws_to_http_keyless`, `ws_keyed_to_keyless`, `http_keyed_to_keyless`
  (ratios of the medians of actions/s);
- `fanout_p99_ms` (result received by the player -> event received by a watcher on the other
  process: the commit is before the result, so this is the commit-to-watcher time less the
  result's own trip; negative when the watcher hears first) and `fanout_send_p99_ms` (send ->
  watcher, an upper bound), both from the keyed WebSocket rounds; `fanout_keyless_p99_ms` from
  the keyless ones;
- `bench_seconds`: how long the whole run took.

With no arguments the run takes about a minute and a half on a 2-core machine. Environment:
BENCH_PLAYERS (64), BENCH_WATCHERS (4), BENCH_SECONDS (8), BENCH_ROUNDS (2), BENCH_PG_URL.
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
SECONDS = float(os.environ.get("BENCH_SECONDS", "8"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "2"))
PORT_A, PORT_B = 18281, 18282
ORDER = [("ws", "keyed"), ("http", "keyed"), ("ws", "keyless"), ("http", "keyless")]


async def ws_round(seconds: float, keyed: bool) -> dict[str, list[float]]:
    base_a, base_b = f"http://127.0.0.1:{PORT_A}", f"http://127.0.0.1:{PORT_B}"
    rng = random.Random(7)  # drive_server's seed
    sent: dict[tuple[str, int], float] = {}  # (game id, version): when its action was sent
    answered: dict[tuple[str, int], float] = {}  # ... when its result reached the player
    heard: list[tuple[tuple[str, int], float]] = []  # ... when its event reached a watcher
    latencies: list[float] = []
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        players = [
            Player(session, base_a, random.Random(rng.random()), keyed) for _ in range(PLAYERS)
        ]
        await asyncio.gather(*(p.sign_up() for p in players))
        await asyncio.gather(*(p.new_game() for p in players))

        async def watcher(game_id: str, ready: asyncio.Event) -> None:
            async with session.ws_connect(base_b + "/api/v1/live") as ws:
                await ws.send_json({"type": "watch", "game_id": game_id})
                async for msg in ws:
                    data = json.loads(msg.data)
                    if data["type"] == "watching":
                        ready.set()
                    elif data["type"] == "event":
                        heard.append(((data["game_id"], data["version"]), time.perf_counter()))

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
                version = 0
                while time.perf_counter() < deadline:
                    body = player.next_action()
                    if body is None:  # a new game, watched by nobody (only the first one is)
                        await player.new_game()
                        version = 0
                        continue
                    n += 1
                    message = {"type": "act", "id": n, "game_id": player.game_id, "action": body}
                    key = player.idempotency_key()
                    if key is not None:
                        message["idempotency_key"] = key
                    t0 = time.perf_counter()
                    sent[(player.game_id, version + 1)] = t0
                    await ws.send_json(message)
                    reply = json.loads((await ws.receive()).data)
                    t1 = time.perf_counter()
                    if reply["type"] != "result":
                        raise RuntimeError(f"{message} answered {reply}")
                    version = reply["version"]
                    answered[(player.game_id, version)] = t1
                    latencies.append(t1 - t0)

        start_t = time.perf_counter()
        await asyncio.gather(*(play(p) for p in players))
        elapsed = time.perf_counter() - start_t
        await asyncio.sleep(1)  # let the last events arrive
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    # Paired once all is in: an event may reach a watcher before the result reaches the player
    # (then the fan-out is negative), most often when the acting process is the busy one.
    fanout = [t - answered[key] for key, t in heard if key in answered]
    fanout_send = [t - sent[key] for key, t in heard if key in sent]
    return {
        "rate": [len(latencies) / elapsed],
        "latencies": sorted(latencies),
        "fanout": sorted(fanout),
        "fanout_send": sorted(fanout_send),
    }


async def main() -> None:
    began = time.perf_counter()
    url = await fresh_pg("solitaire_bench_ws")
    args = ["-m", "server", "--database-url", url]
    a = await start(args, PORT_A)
    b = await start(args, PORT_B)
    figures: dict[str, list[float]] = {}

    def add(name: str, value: float) -> None:
        figures.setdefault(name, []).append(value)

    try:
        for round_ in range(ROUNDS):
            for transport, variant in ORDER if round_ % 2 == 0 else ORDER[::-1]:
                keyed = variant == "keyed"
                if transport == "ws":
                    r = await ws_round(SECONDS, keyed)
                    rate, latencies = r["rate"][0], r["latencies"]
                    fanout = pct(r["fanout"], 0.99)
                    add("fanout_p99_ms" if keyed else "fanout_keyless_p99_ms", fanout)
                    if keyed:
                        add("fanout_send_p99_ms", pct(r["fanout_send"], 0.99))
                    extra = f", fan-out p99 {fanout:.1f} ms"
                else:
                    drive = await drive_server(f"http://127.0.0.1:{PORT_A}", SECONDS, keyed)
                    if drive.errors:
                        raise RuntimeError(f"{drive.errors} HTTP actions were refused")
                    rate, latencies, extra = drive.rate, drive.latencies, ""
                add(f"{transport}_{variant}_actions_per_s", rate)
                add(f"{transport}_{variant}_p50_ms", pct(latencies, 0.5))
                add(f"{transport}_{variant}_p99_ms", pct(latencies, 0.99))
                print(
                    f"# round {round_ + 1}: {transport} {variant} {rate:.0f} actions/s, "
                    f"p99 {pct(latencies, 0.99):.0f} ms{extra}",
                    flush=True,
                )
    finally:
        stop(a)
        stop(b)
    median = {name: statistics.median(values) for name, values in figures.items()}
    rates = {
        name.removesuffix("_actions_per_s"): value
        for name, value in median.items()
        if name.endswith("_actions_per_s")
    }
    out: dict[str, float] = {}
    for variant in ("keyed", "keyless"):
        for transport in ("ws", "http"):
            for figure in ("actions_per_s", "p50_ms", "p99_ms"):
                name = f"{transport}_{variant}_{figure}"
                out[name] = median[name]
        out[f"ws_to_http_{variant}"] = rates[f"ws_{variant}"] / rates[f"http_{variant}"]
    for transport in ("ws", "http"):
        out[f"{transport}_keyed_to_keyless"] = (
            rates[f"{transport}_keyed"] / rates[f"{transport}_keyless"]
        )
    for name in ("fanout_p99_ms", "fanout_send_p99_ms", "fanout_keyless_p99_ms"):
        out[name] = median[name]
    out["bench_seconds"] = time.perf_counter() - began
    print(f"players={PLAYERS}")
    print(f"watchers_per_game={WATCHERS}")
    print(f"rounds={ROUNDS}")
    for name, value in out.items():
        print(f"{name}={value:.2f}")


if __name__ == "__main__":
    asyncio.run(main())
