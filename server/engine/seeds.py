"""Deals neither side can choose (SPEC 1.8.2): the HMAC of a server seed over a client seed.

A server-dealt solo game with nonce *k* of a seed pair is dealt from `RU2-<rule>-<n>`, where *n*
is the first 16 bytes (big-endian) of HMAC-SHA256(key = server seed, msg = client seed ":" k);
a winnable-only game takes the message `client seed ":" k ":" j` for candidates j = 0, 1, 2 ...
and deals the first one the solver certifies. A race's message is its racers' client seeds,
sorted and joined by a newline (then ":" j when winnable). The server seed is published first by
its hash (`seed_hash`), so the server cannot pick it after seeing the client seed, and the
client seed is the player's, so the server cannot choose the deal alone.

Pure: the standard library only.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable
from typing import Final

from server.engine.codes import DealCode, Rule

SERVER_SEED_BYTES: Final = 32
CLIENT_SEED_MAX: Final = 64


def seed_hash(server_seed: bytes) -> str:
    """The commitment of a server seed: the lower-case hex SHA-256 of its bytes."""
    return hashlib.sha256(server_seed).hexdigest()


def client_seed_problem(client_seed: object) -> str | None:
    """Why `client_seed` is not a client seed (1-64 printable ASCII characters), or None."""
    if not isinstance(client_seed, str):
        return "a client seed is a string"
    if not 1 <= len(client_seed) <= CLIENT_SEED_MAX:
        return f"a client seed has 1 to {CLIENT_SEED_MAX} characters"
    if any(not " " <= c <= "~" for c in client_seed):
        return "a client seed has printable ASCII characters only (space to ~)"
    return None


def game_message(client_seed: str, nonce: int, candidate: int | None = None) -> str:
    """The HMAC's message of a solo game: `client_seed:nonce`, then `:candidate` when winnable."""
    text = f"{client_seed}:{nonce}"
    return text if candidate is None else f"{text}:{candidate}"


def race_message(client_seeds: Iterable[str], candidate: int | None = None) -> str:
    """The HMAC's message of a race: the racers' client seeds sorted (by their code points, as
    Python sorts strings) and joined by a newline, then `:candidate` when winnable."""
    text = "\n".join(sorted(client_seeds))
    return text if candidate is None else f"{text}:{candidate}"


def seed_number(server_seed: bytes, message: str) -> int:
    """The first 16 bytes, big-endian, of HMAC-SHA256(server_seed, message as ASCII)."""
    digest = hmac.new(server_seed, message.encode("ascii"), hashlib.sha256).digest()
    return int.from_bytes(digest[:16], "big")


def seeded_code(server_seed: bytes, message: str, rule: Rule) -> DealCode:
    """The RU2 code that `server_seed` and `message` deal under `rule`."""
    return DealCode(rule, seed_number(server_seed, message), 2)
