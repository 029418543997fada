"""A verifier anyone can run offline: `python -m server.verify FILE [FILE ...] [--seeds FILE]`.

It checks games the server dealt without asking the server anything (SPEC 1.8.1, 1.8.2, 2.4).
FILE is a replay document (`GET /api/v1/games/{id}/replay`), an NDJSON export (one replay a
line, `GET /api/v1/players/{id}/games/export`), the account's export (`GET /api/v1/me/export`,
whose revealed seed pairs are used too), or `-` for standard input. `--seeds FILE` (repeatable)
adds revealed server seeds: the answer of `GET /api/v1/me/seeds/history`, of the rotation
`PUT /api/v1/me/seeds` (its `previous`), or an account export.

For each game it prints one line per check, ✓ (holds), ✗ (fails), … (pending: it can be made
only later) or · (not made: an earlier check failed, or it does not apply):

1. server seed: the SHA-256 of the revealed server seed (in the replay's `seed.server_seed`, or
   found by its hash in the seeds given) is the `server_seed_hash` published before the player
   chose their client seed; pending until the pair is rotated (`PUT /api/v1/me/seeds`);
2. dealt from your seed (a race: from the racers' seeds): the code is `RU2-<rule>-<n>`, n the
   first 16 bytes of HMAC-SHA256(server seed, message), the message `client_seed:nonce` (then
   `:candidate` for a winnable-only game; a race's client seeds sorted, joined by newlines);
3. commitment: the SHA-256 of the code's text is the `deal_commitment` shown from the deal;
4. deal: the document's `deal` is the one the code deals (and the rule is the code's);
5. actions: every action replays on that deal under the rules (the engine's own);
6. result: the status, score, ranked score and moves the actions lead to are the document's.

A game with `"seed": null` (a chosen deal, the daily deal, a game dealt before seeds) has only
checks 3 to 6. While a game's code is secret, checks 2 to 6 are pending.

The exit status is 0 when no check failed, 1 when one did, 2 when an input cannot be read (a
message says why). Only the standard library and `server.engine`: no server, no database, no
network, so a player who distrusts the server can read every line of what they run.

Worked example (`tests/data/seeds.json`): the server seed 000102…1e1f (32 bytes 0 to 31) has
the hash 630dcd2966c4…d710dd; with the client seed `x` and nonce 0 the message is `x:0`, whose
HMAC's first 16 bytes are n = 126945266227744933044830741537099394946, so the classic game is
`RU2-C-AUQDUMM-NMJJPXO-PCCKGWH-SWAONCK`, with commitment 7ad31fdf657e…2f6f5335.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from server.engine.cards import card_text
from server.engine.codes import DealCode
from server.engine.errors import NotationError
from server.engine.replay import verify_replay
from server.engine.seeds import game_message, race_message, seed_hash, seeded_code
from server.engine.solver import SolveStatus, solve_deal

REPLAY_FORMAT: Final = "russian-solitaire-replay"
EXPORT_FORMAT: Final = "russian-solitaire-export"

OK: Final = "ok"
FAILED: Final = "failed"
PENDING: Final = "pending"
NOT_MADE: Final = "not made"

MARKS: Final = {OK: "✓", FAILED: "✗", PENDING: "…", NOT_MADE: "·"}
ASCII_MARKS: Final = {OK: "[ok]", FAILED: "[FAILED]", PENDING: "[pending]", NOT_MADE: "[-]"}

RESULT_FIELDS: Final = ("status", "score", "ranked_score", "moves")


class Unreadable(Exception):
    """An input that is not a replay, an export or a seeds document (exit status 2)."""


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    state: str
    text: str


@dataclass(slots=True)
class Report:
    """The checks of one game."""

    where: str
    title: str
    checks: list[Check] = field(default_factory=list)

    def add(self, name: str, state: str, text: str) -> None:
        self.checks.append(Check(name, state, text))

    @property
    def failed(self) -> bool:
        return any(c.state == FAILED for c in self.checks)


def short(hex_text: str) -> str:
    return f"{hex_text[:12]}…" if len(hex_text) > 16 else hex_text


# ------------------------------------------------------------------------------ reading


def read_text(name: str) -> str:
    try:
        if name == "-":
            return sys.stdin.read()
        with open(name, encoding="utf-8") as handle:
            return handle.read()
    except OSError as exc:
        raise Unreadable(f"{name}: cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise Unreadable(f"{name}: is not UTF-8 text") from None


def parse_documents(name: str, text: str) -> list[tuple[str, Any]]:
    """The JSON documents of a file, with where each is: the whole file, or one a line
    (NDJSON)."""
    if not text.strip():
        raise Unreadable(f"{name}: is empty")
    try:
        return [(name, json.loads(text))]
    except json.JSONDecodeError as whole:
        documents: list[tuple[str, Any]] = []
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                documents.append((f"{name}:{number}", json.loads(line)))
            except json.JSONDecodeError as exc:
                if number == 1 and not documents:
                    raise Unreadable(
                        f"{name}: is not JSON (line {whole.lineno}, column {whole.colno}: "
                        f"{whole.msg})"
                    ) from None
                raise Unreadable(
                    f"{name}: line {number} is not JSON (column {exc.colno}: {exc.msg})"
                ) from None
        return documents


def is_replay(doc: Any) -> bool:
    return isinstance(doc, dict) and (
        doc.get("format") == REPLAY_FORMAT or ("actions" in doc and "deal_commitment" in doc)
    )


def seed_entries(doc: Any) -> list[Any] | None:
    """The seed pairs a document carries (a history answer, a rotation's answer, an account
    export, or a bare list of pairs), or None when it carries none."""
    if isinstance(doc, list):
        return doc
    if not isinstance(doc, dict):
        return None
    found: list[Any] = []
    seeds = doc.get("seeds")
    if isinstance(seeds, list):
        found += seeds
    elif isinstance(seeds, dict) and isinstance(seeds.get("history"), list):
        found += seeds["history"]  # an account export: the current pair, and the ended ones
    if isinstance(doc.get("previous"), dict):
        found.append(doc["previous"])
    if "server_seed" in doc and "server_seed_hash" in doc:
        found.append(doc)
    return found if found or "seeds" in doc else None


def games_of(where: str, doc: Any) -> Iterator[tuple[str, Any]]:
    """The replays of a document: itself, an account export's games, or a list's items."""
    if is_replay(doc):
        yield where, doc
    elif isinstance(doc, dict) and doc.get("format") == EXPORT_FORMAT:
        games = doc.get("games")
        if not isinstance(games, list):
            raise Unreadable(f"{where}: an export without its list of games")
        for index, game in enumerate(games):
            yield f"{where} games[{index}]", game
    elif isinstance(doc, list) and all(is_replay(item) for item in doc):
        for index, game in enumerate(doc):
            yield f"{where}[{index}]", game
    else:
        raise Unreadable(
            f"{where}: is not a replay document, an NDJSON export or an account export "
            f'(a replay has "format": "{REPLAY_FORMAT}")'
        )


class Seeds:
    """Revealed server seeds by the hash that committed them."""

    def __init__(self, search: bool = True) -> None:
        self.by_hash: dict[str, str] = {}
        self.search = search
        """Whether a winnable-only deal's earlier candidates are searched again (`--no-search`
        leaves that check out: the solver can take seconds a candidate)."""

    def add(self, where: str, entries: list[Any]) -> None:
        for entry in entries:
            if not isinstance(entry, dict):
                raise Unreadable(f"{where}: a seed pair is an object with server_seed")
            seed, hashed = entry.get("server_seed"), entry.get("server_seed_hash")
            if isinstance(seed, str) and isinstance(hashed, str):
                self.by_hash[hashed.lower()] = seed

    def find(self, hashed: str) -> str | None:
        return self.by_hash.get(hashed.lower())


# ------------------------------------------------------------------------------ checking


def deal_text(code: DealCode) -> list[list[str]]:
    return [[card_text(c) for c in column] for column in code.columns()]


def seed_bytes(text: object) -> bytes | None:
    if not isinstance(text, str) or len(text) != 64:
        return None
    try:
        return bytes.fromhex(text)
    except ValueError:
        return None


def is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_seed(report: Report, doc: dict[str, Any], code: DealCode | None, seeds: Seeds) -> None:
    """Checks 1 and 2: the server seed against its hash, the HMAC against the code."""
    seed = doc.get("seed")
    race = isinstance(seed, dict) and "client_seeds" in seed
    dealt = "dealt from the racers' seeds" if race else "dealt from your seed"
    if seed is None:
        report.add(
            "server seed",
            NOT_MADE,
            "no player seed: a chosen deal, the daily deal or a game dealt before seeds "
            "(its commitment is checked below)",
        )
        return
    hashed = seed.get("server_seed_hash") if isinstance(seed, dict) else None
    if not isinstance(hashed, str):
        report.add("server seed", FAILED, "the document's seed has no server_seed_hash")
        report.add(dealt, NOT_MADE, "no server seed to check")
        return
    revealed = seed.get("server_seed")
    source = "the replay"
    if revealed is None:
        revealed, source = seeds.find(hashed), "the seeds given"
    if revealed is None:
        report.add(
            "server seed",
            PENDING,
            f"not revealed yet (hash {short(hashed)}): it is revealed when you rotate your "
            "seed (PUT /api/v1/me/seeds); then pass --seeds with GET /api/v1/me/seeds/history"
            if not race
            else f"not revealed yet (hash {short(hashed)}): a race's seed is revealed when it "
            "finishes",
        )
        report.add(dealt, PENDING, "waits for the server seed")
        return
    key = seed_bytes(revealed)
    if key is None:
        report.add("server seed", FAILED, f"{source} gives no 32-byte hex server seed")
        report.add(dealt, NOT_MADE, "no server seed to check")
        return
    if seed_hash(key) == hashed.lower():
        report.add(
            "server seed",
            OK,
            f"the SHA-256 of the server seed (from {source}) is server_seed_hash {short(hashed)}",
        )
    else:
        report.add(
            "server seed",
            FAILED,
            f"the SHA-256 of the server seed (from {source}) is {short(seed_hash(key))}, "
            f"not server_seed_hash {short(hashed)}",
        )
    candidate = seed.get("candidate")
    if candidate is not None and not (is_int(candidate) and candidate >= 0):
        report.add(dealt, FAILED, f"the candidate {candidate!r} is not a whole number")
        return
    if race:
        client_seeds = seed.get("client_seeds")
        if not isinstance(client_seeds, list) or not all(isinstance(s, str) for s in client_seeds):
            report.add(dealt, FAILED, "the race's client_seeds are not a list of texts")
            return
        message = race_message(client_seeds, candidate)
    else:
        client_seed, nonce = seed.get("client_seed"), seed.get("nonce")
        if not isinstance(client_seed, str) or not (is_int(nonce) and nonce >= 0):
            report.add(dealt, FAILED, "the seed's client_seed or nonce is missing or malformed")
            return
        message = game_message(client_seed, nonce, candidate)
    if code is None:
        report.add(dealt, PENDING, "the code is hidden until the game ends")
        return
    try:
        expected = seeded_code(key, message, code.rule)
    except UnicodeEncodeError:
        report.add(dealt, FAILED, "a client seed is not ASCII text")
        return
    shown = json.dumps(message, ensure_ascii=True)
    if expected == code:
        report.add(dealt, OK, f"HMAC-SHA256(server seed, {shown}) gives {code}")
    else:
        report.add(dealt, FAILED, f"HMAC-SHA256(server seed, {shown}) gives {expected}, not {code}")
        return
    if candidate is not None and seeds.search:
        check_first_certified(report, key, candidate, code, race, seed)
    elif candidate is not None:
        report.add("first certified", NOT_MADE, "the earlier candidates were not searched")


CERTIFY_NODES: Final = 60_000
"""The node budget the server certifies a winnable-only deal with (`DEAL_NODES` of
`server.services.deals`; the solver is deterministic, so the same budget gives the same
verdicts here)."""


def check_first_certified(
    report: Report, key: bytes, candidate: int, code: DealCode, race: bool, seed: dict[str, Any]
) -> None:
    """A winnable-only deal is the *first* candidate the solver certifies (SPEC 1.8.2): the
    earlier ones, searched again here with the server's budget, must not be certified, or the
    server could have picked among candidates."""
    for j in range(candidate):
        if race:
            message = race_message(seed["client_seeds"], j)
        else:
            message = game_message(seed["client_seed"], seed["nonce"], j)
        earlier = seeded_code(key, message, code.rule)
        verdict = solve_deal(earlier, take_backs=True, max_nodes=CERTIFY_NODES)
        if verdict.status is SolveStatus.WINNABLE:
            report.add(
                "first certified",
                FAILED,
                f"candidate {j} ({earlier}) is certified winnable too: "
                f"{candidate} was not the first",
            )
            return
    report.add(
        "first certified",
        OK,
        f"candidate {candidate} is the first the solver certifies"
        + (f" (candidates 0 to {candidate - 1} are not)" if candidate else ""),
    )


def first_difference(shown: Any, dealt: list[list[str]]) -> str:
    if not isinstance(shown, list) or len(shown) != len(dealt):
        return "it is not seven columns"
    for index, (column, expected) in enumerate(zip(shown, dealt, strict=True), 1):
        if not isinstance(column, list) or len(column) != len(expected):
            count = len(column) if isinstance(column, list) else 0
            return f"column t{index} has {count} cards, the code deals {len(expected)}"
        for place, (card, wanted) in enumerate(zip(column, expected, strict=True), 1):
            if card != wanted:
                return f"card {place} of t{index} is {card!r}, the code deals {wanted}"
    return "it differs"


def check_game(where: str, doc: Any, seeds: Seeds) -> Report:
    if not isinstance(doc, dict):
        report = Report(where, "?")
        report.add("document", FAILED, "a replay is a JSON object")
        return report
    game_id = doc.get("game_id")
    text = doc.get("code")
    report = Report(where, f"game {game_id}" if game_id else "game")
    code: DealCode | None = None
    bad_code = False
    if text is not None:
        try:
            code = DealCode.parse(text)
        except NotationError as exc:
            bad_code = True
            report.title += f" (code {text!r})"
            check_seed(report, doc, None, seeds)
            report.add("commitment", FAILED, f"the code does not parse: {exc}")
        else:
            report.title += f", {code}"
    if not bad_code:
        check_seed(report, doc, code, seeds)
    rule = doc.get("rule")
    if isinstance(rule, str):
        report.title += f", {rule}"
    if code is None:
        hidden = "the code is hidden until the game ends" if not bad_code else "no code"
        if not bad_code:
            report.add(
                "commitment",
                PENDING,
                f"{hidden} (deal_commitment {short(str(doc.get('deal_commitment')))})",
            )
        for name in ("deal", "actions", "result"):
            report.add(name, PENDING if not bad_code else NOT_MADE, hidden)
        return report
    committed = doc.get("deal_commitment")
    if committed == code.commitment:
        report.add(
            "commitment", OK, f"the SHA-256 of the code is deal_commitment {short(code.commitment)}"
        )
    elif committed is None:
        report.add("commitment", NOT_MADE, "the document carries no deal_commitment")
    else:
        report.add(
            "commitment",
            FAILED,
            f"the SHA-256 of the code is {short(code.commitment)}, not deal_commitment "
            f"{short(str(committed))}",
        )
    deal = doc.get("deal")
    if rule is not None and rule != code.rule.value:
        report.add("deal", FAILED, f"the document's rule is {rule!r}, the code's {code.rule.value}")
    elif deal is None:
        report.add("deal", PENDING, "the document shows no deal yet (the game is in play)")
    else:
        dealt = deal_text(code)
        if deal == dealt:
            report.add("deal", OK, "the document's deal is the one the code deals")
        else:
            report.add(
                "deal",
                FAILED,
                f"the document's deal is not the code's: {first_difference(deal, dealt)}",
            )
    check_play(report, doc, code)
    return report


def check_play(report: Report, doc: dict[str, Any], code: DealCode) -> None:
    """Checks 5 and 6: the actions against the rules, the result against the document's."""
    items = doc.get("actions")
    if not isinstance(items, list):
        report.add("actions", FAILED, "the document has no list of actions")
        report.add("result", NOT_MADE, "no actions to replay")
        return
    moves: list[str] = []
    for index, item in enumerate(items):
        move = item.get("move") if isinstance(item, dict) else item
        if not isinstance(move, str):
            report.add("actions", FAILED, f"action {index + 1} is not {{'move': '<move text>'}}")
            report.add("result", NOT_MADE, "the actions do not replay")
            return
        moves.append(move)
    result = doc.get("result")
    claimed = (
        {name: result[name] for name in RESULT_FIELDS if name in result}
        if isinstance(result, dict)
        else None
    )
    verdict = verify_replay(code, moves, claimed)
    if verdict.failed_index is not None:
        index = verdict.failed_index
        report.add(
            "actions",
            FAILED,
            f"action {index + 1} ({moves[index]!r}) is refused: {verdict.rule}: {verdict.reason}",
        )
        report.add("result", NOT_MADE, "the actions do not replay")
        return
    report.add("actions", OK, f"all {len(moves)} actions follow the {code.rule.value} rules")
    outcome = f"{verdict.status.value}, score {verdict.score}, {verdict.moves} moves"
    if not claimed:
        report.add("result", FAILED, f"the document has no result (the actions give {outcome})")
    elif verdict.valid:
        report.add("result", OK, f"{outcome}, as the document says")
    else:
        report.add("result", FAILED, verdict.reason or "the result differs")


# ------------------------------------------------------------------------------ the command


def marks_for(stream: Any) -> dict[str, str]:
    encoding = getattr(stream, "encoding", None) or "ascii"
    try:
        "".join(MARKS.values()).encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return ASCII_MARKS
    return MARKS


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m server.verify",
        description="Check Russian Solitaire replays and exports offline: the server seed, "
        "the code it deals, the commitment, the deal, the actions and the result.",
        epilog="Exit status: 0 nothing failed, 1 a check failed, 2 an input cannot be read.",
    )
    parser.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="a replay (JSON), an NDJSON export, an account export, or - for standard input",
    )
    parser.add_argument(
        "--no-search",
        action="store_true",
        help="do not search a winnable-only deal's earlier candidates again with the solver",
    )
    parser.add_argument(
        "--seeds",
        action="append",
        default=[],
        metavar="HISTORY",
        help="revealed server seeds: GET /api/v1/me/seeds/history's answer (repeatable)",
    )
    return parser


def run(argv: Sequence[str] | None = None, out: Any = None) -> int:
    out = out if out is not None else sys.stdout
    args = parser().parse_args(argv)
    seeds = Seeds(search=not args.no_search)
    games: list[tuple[str, Any]] = []
    try:
        for name in args.seeds:
            for where, doc in parse_documents(name, read_text(name)):
                entries = seed_entries(doc)
                if entries is None:
                    raise Unreadable(
                        f"{where}: is not a list of seed pairs (GET /api/v1/me/seeds/history)"
                    )
                seeds.add(where, entries)
        for name in args.files:
            for where, doc in parse_documents(name, read_text(name)):
                if isinstance(doc, dict) and doc.get("format") == EXPORT_FORMAT:
                    seeds.add(where, seed_entries(doc) or [])
                elif not is_replay(doc) and seed_entries(doc) is not None:
                    seeds.add(where, seed_entries(doc) or [])
                    continue
                games.extend(games_of(where, doc))
    except Unreadable as exc:
        print(f"python -m server.verify: {exc}", file=sys.stderr)
        return 2
    marks = marks_for(out)
    counts = dict.fromkeys(MARKS, 0)
    for where, doc in games:
        report = check_game(where, doc, seeds)
        print(f"{report.title} ({report.where})", file=out)
        for check in report.checks:
            counts[check.state] += 1
            print(f"  {marks[check.state]} {check.name}: {check.text}", file=out)
    failed = counts[FAILED]
    print(
        f"{len(games)} game{'s' if len(games) != 1 else ''}: {counts[OK]} checks passed, "
        f"{failed} failed, {counts[PENDING]} pending",
        file=out,
    )
    return 1 if failed else 0


def main() -> None:
    sys.exit(run())


if __name__ == "__main__":
    main()
