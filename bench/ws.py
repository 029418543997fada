"""WebSocket play beside HTTP play, keyed and keyless, and fan-out across two server processes
with each broker: PostgreSQL LISTEN/NOTIFY and Redis pub/sub.

Two pairs of server processes (`python -m server`, RATE_LIMIT=0), each pair on a fresh
PostgreSQL database of its own on $BENCH_PG_URL's server: `pg` (A and B on `solitaire_bench_ws`,
the default broker) and `redis` (A and B on `solitaire_bench_ws_redis`,
`BROKER_URL=$BENCH_REDIS_URL`). One pair runs at a time (the database server, and its
connections, may be shared with other work). Each round makes six measurements of
BENCH_SECONDS on a pair's process A, with BENCH_PLAYERS (64) fresh players each playing random
legal moves of its own game (mirrored by a local engine, as in bench/load.py; a player whose game
is over starts another):

- `ws` keyed, once per broker: each player acts over its own WebSocket (`act` messages, one at
  a time) and sends a fresh `idempotency_key` (uuid4) with every action, as the web client does;
  BENCH_WATCHERS (4) watchers per game, connected to the pair's process B, receive every action
  through the pair's broker (with PostgreSQL, B hears every game's events, watched or not; with
  Redis, only those of the games its sockets watch);
- `http` keyed (the `pg` pair): the same players' moves over HTTP (bench/load.py's driver) with
  a fresh `Idempotency-Key` header on every action;
- `ws` (both brokers) and `http` keyless: the same without keys.

The order is the `pg` pair (ws keyed, http keyed, ws keyless, http keyless) then the `redis`
pair (ws keyed, ws keyless) in odd rounds, and the reverse in even rounds: the machine is shared,
so compare ratios within one run, not figures across runs. All use one seed: the same deals and
moves. Printed last as `name=value` lines (medians over the rounds):

- `ws_keyed_actions_per_s_{pg,redis}`, `ws_keyed_p50_ms_{pg,redis}`, `ws_keyed_p99_ms_{pg,redis}`
  (send to result over the socket), the same for `ws_keyless_*`, and `http_keyed_*`,
  `http_keyless_*` (request to response, the `pg` pair);
- `ws_to_http_keyed`, `ws_to_http_keyless`, `ws_keyed_to_keyless`, `http_keyed_to_keyless`
  (ratios of the medians of actions/s; ws with PostgreSQL's broker), `redis_to_pg_keyed`,
  `redis_to_pg_keyless` (ws actions/s with Redis over those with PostgreSQL);
- `fanout_p99_ms_{pg,redis}` (result received by the player -> event received by a watcher on
  the other process: the commit is before the result, so this is the commit-to-watcher time less
  the result's own trip; negative when the watcher hears first) and
  `fanout_send_p99_ms_{pg,redis}` (send -> watcher, an upper bound), both from the keyed
  WebSocket rounds; `fanout_keyless_p99_ms_{pg,redis}` from the keyless ones;
  `fanout_events_{pg,redis}` (events heard by the watchers per keyed round: every action times
  the watchers, or the fan-out lost some);
- `signup_retries` (sign-ups answered with an error and tried again), `bench_seconds`: how long
  the whole run took.

With no arguments the run takes about two and a half minutes on a 2-core machine loaded by other
work. Environment: BENCH_PLAYERS (64), BENCH_WATCHERS (4), BENCH_SECONDS (6), BENCH_ROUNDS (2),
BENCH_PG_URL, BENCH_REDIS_URL (redis://127.0.0.1:6379/0).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Callable

import aiohttp
from load import PG_URL, Player, Server, drive_server, fresh_pg, pct, start, stop
from yarl import URL

PLAYERS = int(os.environ.get("BENCH_PLAYERS", "64"))
WATCHERS = int(os.environ.get("BENCH_WATCHERS", "4"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "6"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "2"))
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")
PORTS = {"pg": (18281, 18282), "redis": (18283, 18284)}
"""Each broker's pair of processes: (A, B)."""
ORDER = {
    "pg": [("ws", "keyed"), ("http", "keyed"), ("ws", "keyless"), ("http", "keyless")],
    "redis": [("ws", "keyed"), ("ws", "keyless")],
}
"""Each pair's measurements in a round (reversed in even rounds)."""
DATABASES = {"pg": "solitaire_bench_ws", "redis": "solitaire_bench_ws_redis"}


RETRIES: list[int] = [0]
"""Sign-ups answered with an error and tried again (a server short of database connections on
a machine shared with other work), printed as `signup_retries`."""


async def sign_up(player: Player) -> None:
    for _ in range(5):
        try:
            await player.sign_up()
            return
        except KeyError:  # no token: the server answered with a problem
            RETRIES[0] += 1
            await asyncio.sleep(1)
    raise RuntimeError("sign-ups kept failing")


async def ws_round(seconds: float, keyed: bool, broker: str) -> dict[str, list[float]]:
    port_a, port_b = PORTS[broker]
    base_a, base_b = f"http://127.0.0.1:{port_a}", f"http://127.0.0.1:{port_b}"
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
        await asyncio.gather(*(sign_up(p) for p in players))
        await asyncio.gather(*(p.new_game() for p in players))

        failed: list[BaseException] = []

        async def watcher(game_id: str, ready: asyncio.Event, n: int) -> None:
            try:
                async with session.ws_connect(base_b + "/api/v1/live", headers=proxied(n)) as ws:
                    await ws.send_json({"type": "watch", "game_id": game_id})
                    async for msg in ws:
                        data = json.loads(msg.data)
                        if data["type"] == "watching":
                            ready.set()
                        elif data["type"] == "event":
                            heard.append(((data["game_id"], data["version"]), time.perf_counter()))
            except Exception as exc:  # said at once, not after the wait for every watcher
                failed.append(exc)
                ready.set()

        readies = []
        tasks: list[asyncio.Task[None]] = []
        for p in players:
            for _ in range(WATCHERS):
                ready = asyncio.Event()
                readies.append(ready)
                tasks.append(asyncio.create_task(watcher(p.game_id, ready, len(tasks))))
        await asyncio.wait_for(asyncio.gather(*(r.wait() for r in readies)), 180)
        if failed:
            raise RuntimeError(f"{len(failed)} watchers failed, the first with {failed[0]!r}")
        deadline = time.perf_counter() + seconds

        async def play(player: Player) -> None:
            headers = player.auth | proxied(players.index(player))
            async with session.ws_connect(base_a + "/api/v1/live", headers=headers) as ws:
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
        "events": [float(len(heard))],
        "latencies": sorted(latencies),
        "fanout": sorted(fanout),
        "fanout_send": sorted(fanout_send),
    }


def proxied(n: int) -> dict[str, str]:
    """The headers of client `n`'s socket as a proxy passes them on: its own address. The
    servers run with TRUST_FORWARDED, as behind deploy/nginx.conf, so the sockets of the
    players and watchers count against the caps of an address each (64 connections, 32 live
    sockets), not all against 127.0.0.1's."""
    return {"X-Forwarded-For": f"10.1.{n // 250}.{n % 250 + 1}"}


async def start_pair(broker: str) -> tuple[Server, Server]:
    """The broker's two processes on its database (TRUST_FORWARDED: see `proxied`)."""
    url = str(URL(PG_URL).with_path("/" + DATABASES[broker]))
    args = ["-m", "server", "--database-url", url]
    settings = {"BROKER_URL": REDIS_URL if broker == "redis" else None, "TRUST_FORWARDED": "1"}
    a = await start(args, PORTS[broker][0], settings=settings)
    try:
        b = await start(args, PORTS[broker][1], settings=settings)
    except BaseException:
        stop(a)
        raise
    return a, b


async def measure(
    broker: str, transport: str, variant: str, round_: int, add: Callable[[str, float], None]
) -> None:
    """One measurement on the broker's pair (`http`: on the `pg` pair's process A)."""
    keyed = variant == "keyed"
    suffix = f"_{broker}" if transport == "ws" else ""
    if transport == "ws":
        r = await ws_round(SECONDS, keyed, broker)
        rate, latencies = r["rate"][0], r["latencies"]
        fanout = pct(r["fanout"], 0.99)
        add(f"fanout_p99_ms_{broker}" if keyed else f"fanout_keyless_p99_ms_{broker}", fanout)
        if keyed:
            add(f"fanout_send_p99_ms_{broker}", pct(r["fanout_send"], 0.99))
            add(f"fanout_events_{broker}", r["events"][0])
        extra = f", fan-out p99 {fanout:.1f} ms"
    else:
        drive = await drive_server(f"http://127.0.0.1:{PORTS[broker][0]}", SECONDS, keyed)
        if drive.errors:
            raise RuntimeError(f"{drive.errors} HTTP actions were refused")
        rate, latencies, extra = drive.rate, drive.latencies, ""
    add(f"{transport}_{variant}_actions_per_s{suffix}", rate)
    add(f"{transport}_{variant}_p50_ms{suffix}", pct(latencies, 0.5))
    add(f"{transport}_{variant}_p99_ms{suffix}", pct(latencies, 0.99))
    print(
        f"# round {round_ + 1}: {transport} {variant} ({broker}) {rate:.0f} actions/s, "
        f"p99 {pct(latencies, 0.99):.0f} ms{extra}",
        flush=True,
    )


async def main() -> None:
    began = time.perf_counter()
    figures: dict[str, list[float]] = {}

    def add(name: str, value: float) -> None:
        figures.setdefault(name, []).append(value)

    for name in DATABASES.values():
        await fresh_pg(name)
    for round_ in range(ROUNDS):
        for broker in ("pg", "redis") if round_ % 2 == 0 else ("redis", "pg"):
            # One pair at a time: the database server is shared, and so are its connections.
            servers = await start_pair(broker)
            try:
                for transport, variant in ORDER[broker][:: 1 if round_ % 2 == 0 else -1]:
                    await measure(broker, transport, variant, round_, add)
            except Exception:
                for server in servers:  # why a server answered with an error, from its log
                    server.log.seek(0)
                    text = server.log.read().decode(errors="replace")
                    if "Traceback" in text:
                        command = " ".join(map(str, server.args))  # type: ignore[arg-type]
                        print(f"# {command}:\n{text[-3000:]}", file=sys.stderr)
                raise
            finally:
                for server in servers:
                    stop(server)
    median = {name: statistics.median(values) for name, values in figures.items()}
    out: dict[str, float] = {}
    for variant in ("keyed", "keyless"):
        for transport, suffixes in (("ws", ("_pg", "_redis")), ("http", ("",))):
            for suffix in suffixes:
                for figure in ("actions_per_s", "p50_ms", "p99_ms"):
                    name = f"{transport}_{variant}_{figure}{suffix}"
                    out[name] = median[name]
    for variant in ("keyed", "keyless"):
        ws = median[f"ws_{variant}_actions_per_s_pg"]
        out[f"ws_to_http_{variant}"] = ws / median[f"http_{variant}_actions_per_s"]
        out[f"redis_to_pg_{variant}"] = median[f"ws_{variant}_actions_per_s_redis"] / ws
    out["ws_keyed_to_keyless"] = (
        median["ws_keyed_actions_per_s_pg"] / median["ws_keyless_actions_per_s_pg"]
    )
    out["http_keyed_to_keyless"] = (
        median["http_keyed_actions_per_s"] / median["http_keyless_actions_per_s"]
    )
    for broker in PORTS:
        for name in ("fanout_p99_ms", "fanout_send_p99_ms", "fanout_keyless_p99_ms"):
            out[f"{name}_{broker}"] = median[f"{name}_{broker}"]
        out[f"fanout_events_{broker}"] = median[f"fanout_events_{broker}"]
    out["signup_retries"] = RETRIES[0]
    out["bench_seconds"] = time.perf_counter() - began
    print(f"players={PLAYERS}")
    print(f"watchers_per_game={WATCHERS}")
    print(f"rounds={ROUNDS}")
    for name, value in out.items():
        print(f"{name}={value:.2f}")


if __name__ == "__main__":
    asyncio.run(main())
