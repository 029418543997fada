"""An example bot for the Russian Solitaire server: it plays a certified winnable deal until it
wins, as a client written from `openapi.yaml` and `asyncapi.yaml` would. aiohttp only.

    python examples/bot.py --server http://127.0.0.1:8080

What it shows, in order (see examples/README.md):
1. Signing up as a guest (`POST /api/v1/players`): a name, no password; the token is shown once.
2. A winnable deal (`POST /api/v1/games` with `winnable: true`): the server deals from a secret
   code and certifies the deal winnable with its solver; the code is `null` until the game ends.
3. The WebSocket (`/api/v1/live`, subprotocol `solitaire.v1`, the token in `Authorization`):
   `follow_me` for the player's own notices, then, for every move, `hint` (the server's solver
   names the next move of a winning line; the game is marked assisted) and `act` with an
   `idempotency_key`, so that a move retried after a lost answer is applied once (the answer
   then says `replayed: true`).
4. `GET /api/v1/games/{id}/legal` before every move: every legal move in one call. The hint's
   move is checked against it; when the solver has no line (`unknown` within its budget) the
   bot picks from the legal moves itself.
5. Pacing by the `RateLimit` header (IETF httpapi rate-limit headers): each HTTP answer says how
   many requests remain (`r`) in the budget nearest to its end and in how many seconds it frees
   up (`t`); the bot waits `t` seconds when fewer than a turn's requests remain, so that it
   never meets a `429`. HTTP and the socket share the budget. A `429` (HTTP `Retry-After`, or a
   socket `error` with `retry_after`) is waited out too, and the message sent again.

It ends with one JSON line (the game, how many hints and moves, how often it paced itself) and
exits 0 when the game is won, 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import string
import sys
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import aiohttp

TURN_COST = 3
"""Requests a turn charges to the budget: `hint` and `act` over the socket, `legal` over HTTP."""

_ITEM = re.compile(r'\s*"([^"]*)"((?:\s*;\s*[A-Za-z_][A-Za-z0-9_.*-]*(?:=[^;,]*)?)*)\s*')


def structured_list(text: str) -> list[tuple[str, dict[str, str]]]:
    """A structured-field list of strings with parameters (RFC 8941), as the rate-limit headers
    are written: `RateLimit-Policy` lists every budget that charged the request
    (`"address";q=200;w=1, "player";q=50;w=1`), `RateLimit` names exactly one, the budget nearest
    to its end (`"player";r=37;t=1`); whatever does not parse is skipped."""
    items = []
    for part in text.split(","):
        found = _ITEM.fullmatch(part)
        if found is None:
            continue
        params = {}
        for param in found.group(2).split(";")[1:]:
            key, _, value = param.strip().partition("=")
            params[key] = value.strip('"')
        items.append((found.group(1), params))
    return items


@dataclass
class Budget:
    """What the last HTTP answer said of the rate budget nearest to its end."""

    name: str = ""
    remaining: int | None = None
    reset: float = 0.0
    policy: str = ""
    paced: int = 0
    paced_seconds: float = 0.0
    refused: int = 0

    def read(self, headers: Any) -> None:
        self.policy = headers.get("RateLimit-Policy", self.policy)
        state = structured_list(headers.get("RateLimit", ""))
        if state:
            name, params = state[0]
            self.name = name
            self.remaining = int(params.get("r", "0"))
            self.reset = float(params.get("t", "1"))
        else:
            self.remaining = None  # no header (RATE_LIMIT=0, or a server without it)

    def window(self) -> float:
        """The window `w` of the budget `RateLimit` names, from `RateLimit-Policy`."""
        for name, params in structured_list(self.policy):
            if name == self.name and "w" in params:
                return float(params["w"])
        return self.reset

    async def pace(self, needed: int, log: Log) -> None:
        """Wait when fewer than `needed` requests remain: `t` seconds when one more is enough
        (the oldest request then leaves the window), else the whole window `w` (then every
        request counted now has left it: the whole quota is free)."""
        if self.remaining is not None and self.remaining < needed:
            wait = self.reset if needed - self.remaining <= 1 else max(self.reset, self.window())
            wait = max(wait, 0.05)
            self.paced += 1
            self.paced_seconds += wait
            log(f"pacing: {self.remaining} left of {self.name!r}; waiting {wait:g} s")
            await asyncio.sleep(wait)
            self.remaining = needed  # at least that many have left the window meanwhile

    def spent(self) -> None:
        """A request that got no headers (a socket message): one fewer remains."""
        if self.remaining is not None:
            self.remaining = max(0, self.remaining - 1)

    async def refused_for(self, seconds: float, log: Log) -> None:
        self.refused += 1
        log(f"429: waiting {seconds:g} s as told")
        await asyncio.sleep(max(seconds, 0.05))


class Log:
    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet

    def __call__(self, text: str) -> None:
        if not self.quiet:
            print(text, file=sys.stderr, flush=True)


class ApiError(Exception):
    def __init__(self, status: int, problem: dict[str, Any]) -> None:
        super().__init__(f"{status}: {problem.get('title')}: {problem.get('detail')}")
        self.status = status
        self.problem = problem


@dataclass
class Http:
    session: aiohttp.ClientSession
    base: str
    budget: Budget
    log: Log
    auth: dict[str, str] = field(default_factory=dict)

    async def call(self, method: str, path: str, body: Any = None) -> Any:
        """One request, paced by the headers; a 429 or 503 is waited out and sent again. An
        answer that is not JSON (an HTML error page from a proxy, say) is an `ApiError` that
        says so."""
        for _ in range(20):
            await self.budget.pace(1, self.log)
            async with self.session.request(
                method, self.base + path, json=body, headers=self.auth
            ) as response:
                self.budget.read(response.headers)
                if response.status in (429, 503):
                    await self.budget.refused_for(
                        float(response.headers.get("Retry-After", "1")), self.log
                    )
                    continue
                text = await response.text()
                try:
                    answer = json.loads(text)
                except ValueError:
                    kind = response.headers.get("Content-Type", "no Content-Type")
                    raise ApiError(
                        response.status,
                        {"title": f"not a JSON answer ({kind})", "detail": text[:200]},
                    ) from None
                if response.status >= 400:
                    raise ApiError(response.status, answer)
                return answer
        raise ApiError(429, {"title": "still refused after 20 tries"})


class Live:
    """The WebSocket: answers matched to their message's `id`, pushed messages aside."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse, budget: Budget, log: Log) -> None:
        self.ws = ws
        self.budget = budget
        self.log = log
        self.waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.notices: list[dict[str, Any]] = []
        self.last_notice = 0
        self.counter = 0
        self.reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        async for msg in self.ws:
            if msg.type != aiohttp.WSMsgType.TEXT:
                break
            message = json.loads(msg.data)
            if message.get("type") == "notice":
                self.notices.append(message)
                self.last_notice = max(self.last_notice, int(message["id"]))
                self.log(f"notice {message['id']}: {message['kind']}")
                continue
            waiter = self.waiting.pop(str(message.get("id")), None)
            if waiter is not None and not waiter.done():
                waiter.set_result(message)
        for waiter in self.waiting.values():
            if not waiter.done():
                waiter.set_exception(ConnectionError(f"socket closed: {self.ws.close_code}"))

    async def ask(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send a message and wait for its answer; a 429 or 503 `error` is waited out (its
        `retry_after`) and the same message sent again (an `act` keeps its idempotency key)."""
        for _ in range(20):
            self.counter += 1
            mid = f"m{self.counter}"
            waiter: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
            self.waiting[mid] = waiter
            await self.ws.send_json({**message, "id": mid})
            self.budget.spent()
            answer = await asyncio.wait_for(waiter, 60)
            if answer["type"] == "error" and answer["problem"].get("status") in (429, 503):
                await self.budget.refused_for(
                    float(answer["problem"].get("retry_after", 1)), self.log
                )
                continue
            return answer
        raise ApiError(429, {"title": "still refused after 20 tries"})

    async def close(self) -> None:
        await self.ws.close()
        self.reader.cancel()


def action_of(move: str) -> dict[str, Any]:
    if move == "undo":
        return {"action": "undo"}
    card, to = move.split("-")
    return {"card": card, "to": to}


def fallback(moves: list[str], undo: bool, rng: random.Random) -> str | None:
    """A move of the bot's own when the solver gives none: a move home (to a foundation) if
    there is one, else any legal move at random (`--seed`); undo when no move is legal."""
    home = [m for m in moves if m.endswith("-f")]
    if home:
        return home[0]
    if moves:
        return rng.choice(moves)
    return "undo" if undo else None


async def play(args: argparse.Namespace) -> dict[str, Any]:
    log = Log(args.quiet)
    rng = random.Random(args.seed)
    budget = Budget()
    base = args.server.rstrip("/")
    name = args.name or "bot-" + "".join(rng.choice(string.ascii_lowercase) for _ in range(8))
    async with aiohttp.ClientSession() as session:
        http = Http(session, base, budget, log)
        me = await http.call("POST", "/api/v1/players", {"name": name})
        http.auth = {"Authorization": f"Bearer {me['token']}"}
        log(f"signed up as {me['name']} ({me['id']}); budgets: {budget.policy or 'none'}")
        game = await http.call("POST", "/api/v1/games", {"rule": args.rule, "winnable": True})
        game_id = game["id"]
        log(f"game {game_id}: a winnable {game['rule']} deal, commitment {game['deal_commitment']}")

        ws = await session.ws_connect(
            base + "/api/v1/live", protocols=("solitaire.v1",), headers=http.auth, heartbeat=20
        )
        live = Live(ws, budget, log)
        following = await live.ask({"type": "follow_me"})
        follows = following["type"] == "following_me"
        log("following my notices" if follows else f"no follow_me here: {following}")

        stats = {
            "hints": 0,
            "own_choices": 0,
            "actions": 0,
            "replayed": 0,
            "http_hints": 0,
            "conflicts": 0,
        }
        ws_hint = True
        try:
            while stats["actions"] + stats["conflicts"] < args.max_actions:
                await budget.pace(TURN_COST, log)  # hint, legal and act
                # The hint first: the first one marks the game assisted, a change with a
                # version of its own, so `legal` after it has the version to act on.
                if ws_hint:
                    answer = await live.ask({"type": "hint", "game_id": game_id})
                    if answer["type"] == "hinted":
                        hint = answer["hint"]
                    else:  # a server without the socket's hint: HTTP's
                        log(f"no hint over the socket ({answer['problem']['title']}): HTTP's")
                        ws_hint = False
                if not ws_hint:
                    hint = await http.call("GET", f"/api/v1/games/{game_id}/hint")
                    stats["http_hints"] += 1
                legal = await http.call("GET", f"/api/v1/games/{game_id}/legal")
                if not legal["moves"] and not legal["undo"]:
                    break  # the game is over
                await budget.pace(1, log)
                if hint.get("move") in legal["moves"] or (
                    hint.get("move") == "undo" and legal["undo"]
                ):
                    move = hint["move"]
                    stats["hints"] += 1
                else:
                    move = fallback(legal["moves"], legal["undo"], rng)
                    stats["own_choices"] += 1
                    log(f"the solver says {hint.get('status')}: my own choice {move}")
                if move is None:
                    break
                key = str(uuid.uuid4())
                act = {
                    "type": "act",
                    "game_id": game_id,
                    "action": {**action_of(move), "expected_version": legal["version"]},
                    "idempotency_key": key,
                }
                result = await live.ask(act)
                if result["type"] == "error":
                    problem = result["problem"]
                    if problem.get("type", "").endswith("/version-conflict"):
                        # The game moved on meanwhile (another client of the player): read
                        # `legal` again and go on from there.
                        stats["conflicts"] += 1
                        log(f"version conflict: {problem.get('detail')}; reading legal again")
                        continue
                    raise ApiError(problem["status"], problem)
                stats["actions"] += 1
                if args.check_retries and stats["actions"] == 1:
                    # As after an answer lost on the way: the same key gets the same answer,
                    # not a second move.
                    again = await live.ask(act)
                    assert again["type"] == "result" and again.get("replayed") is True, again
                    assert again["version"] == result["version"], again
                    stats["replayed"] += 1
                game = result["game"]
                log(f"{result['version']:4} {result['move']:6} score {game['score']}")
                if game["status"] != "active":
                    break
            await asyncio.sleep(0.2)  # notices of the end, if any, arrive meanwhile
        finally:
            await live.close()
        final = await http.call("GET", f"/api/v1/games/{game_id}")
    return {
        "player": me["id"],
        "game_id": game_id,
        "status": final["status"],
        "code": final["code"],
        "score": final["score"],
        "moves": final["moves"],
        "assisted": final["assisted"],
        **stats,
        "followed": follows,
        "notices": [n["kind"] for n in live.notices],
        "rate_limit_policy": budget.policy,
        "paced": budget.paced,
        "paced_seconds": round(budget.paced_seconds, 3),
        "refused_429": budget.refused,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", default="http://127.0.0.1:8080")
    parser.add_argument("--name", help="the player's name (default: bot-<8 letters>)")
    parser.add_argument("--rule", choices=("classic", "relaxed"), default="classic")
    parser.add_argument("--max-actions", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=None, help="for the bot's own choices")
    parser.add_argument(
        "--check-retries",
        action="store_true",
        help="send the first move twice with one idempotency key: it must be applied once",
    )
    parser.add_argument("--quiet", action="store_true", help="only the final JSON line")
    args = parser.parse_args(argv)
    started = time.monotonic()
    try:
        summary = asyncio.run(play(args))
    except ApiError as exc:
        print(f"bot: the server answered {exc}", file=sys.stderr, flush=True)
        return 1
    summary["seconds"] = round(time.monotonic() - started, 3)
    print(json.dumps(summary), flush=True)
    return 0 if summary["status"] == "won" else 1


if __name__ == "__main__":
    sys.exit(main())
