"""Players' seed pairs (SPEC 1.8.2): deals neither the server nor the player can choose.

Every player has a *current* pair (a secret server seed, published first by its hash, and the
player's client seed; its nonce counts the server-dealt solo games dealt with it) and a *next*
pair, whose server seed's hash is shown before the player chooses the client seed that goes
with it. `rotate` ends the current pair (its server seed is revealed: every game it dealt can
then be checked), and the next becomes current with the client seed the player chose and nonce
0, with a new next pair committed after it. A rotation is refused (`409`, rule `seed_in_use`)
while a game the current pair dealt is in play: the revealed seed would reveal its deal. A player
gets their first two pairs at sign-up, with a client seed proposed at random (16 hex digits);
players made before seeds existed get theirs when they first need them.

A random game with nonce *k* is dealt from the HMAC of the server seed over `client:k`; a
winnable-only game takes `client:k:j` for candidates j = 0, 1, ... and deals the first the
solver certifies (`server.engine.seeds`). The nonce is taken in the statement that reserves it:
two games dealt at once never share one, and a winnable-only game whose certification fails
(`503`) leaves its nonce unused, never dealt again (reusing it would let the server try again).

**How the server seeds are kept.** Sealed with AES-256-GCM (the `cryptography` package), under
a key that is not in the database when `SEED_KEY` is set (64 hex digits, the same in every
process of a deployment, as `DEAL_SECRET`): a dump of the database alone then reveals no current
or next server seed. Without `SEED_KEY` the key is generated once and kept in `server_secrets`
(`seed_key`), so the embedded default needs no set-up, and a dump of that database does hold
the key: production sets `SEED_KEY` (the README says so). Each sealed seed is bound to its hash
(the cipher's associated data), so sealed seeds cannot be swapped between pairs. An ended
pair's seed is stored in the clear (`revealed_seed`): it is public from then on.
"""

from __future__ import annotations

import base64
import secrets
import uuid
from dataclasses import dataclass, replace

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from server.engine import DealCode, Rule
from server.engine.seeds import (
    SERVER_SEED_BYTES,
    client_seed_problem,
    game_message,
    seed_hash,
    seeded_code,
)
from server.services.errors import Busy, InvalidInput, SeedInUse
from server.services.secrets import load_server_secret
from server.services.sessions import require
from server.services.values import Clock, Principal, wall_clock_ms
from server.settings import SettingsError
from server.store import players as player_rows
from server.store import seeds as rows
from server.store.seeds import CURRENT, NEXT, PairRecord

SEED_KEY = "seed_key"
_SEALED = "v1:"
HISTORY_LIMIT = 100


class SeedBox:
    """Seals and opens server seeds (AES-256-GCM, a random 96-bit nonce each, the seed's hash
    as associated data)."""

    def __init__(self, key: bytes) -> None:
        if len(key) != 32:
            raise ValueError("a seed key is 32 bytes (64 hex digits)")
        self._aead = AESGCM(key)

    @staticmethod
    def key_of(text: str) -> bytes:
        """A key from its 64 hex digits (`SEED_KEY`, or the stored `seed_key`)."""
        try:
            key = bytes.fromhex(text)
        except ValueError:
            raise ValueError("SEED_KEY must be 64 hex digits") from None
        if len(key) != 32:
            raise ValueError("SEED_KEY must be 64 hex digits")
        return key

    def seal(self, seed: bytes) -> str:
        nonce = secrets.token_bytes(12)
        sealed = self._aead.encrypt(nonce, seed, seed_hash(seed).encode())
        return _SEALED + base64.urlsafe_b64encode(nonce + sealed).decode()

    def open(self, text: str, expected_hash: str) -> bytes:
        """The seed sealed in `text`, checked against `expected_hash`."""
        if not text.startswith(_SEALED):
            raise ValueError("not a sealed seed")
        raw = base64.urlsafe_b64decode(text[len(_SEALED) :])
        try:
            seed = self._aead.decrypt(raw[:12], raw[12:], expected_hash.encode())
        except InvalidTag:
            raise ValueError(
                "a sealed seed did not open: is SEED_KEY the one it was sealed with?"
            ) from None
        if seed_hash(seed) != expected_hash:
            raise ValueError("a sealed seed does not match its hash")
        return seed


async def load_seed_box(
    writers: async_sessionmaker[AsyncSession], seed_key: str | None, clock: Clock = wall_clock_ms
) -> SeedBox:
    """The box of `SEED_KEY`, else of the key kept in `server_secrets`; checked on a sealed
    seed of the database, so that a key that is not the one the seeds were sealed with (a
    `SEED_KEY` set on a deployment that began without it, say) stops the server at its start
    with a clear message rather than failing every seeded game and race later."""
    if seed_key:
        box = SeedBox(SeedBox.key_of(seed_key))
    else:
        stored = await load_server_secret(writers, SEED_KEY, clock)
        box = SeedBox(SeedBox.key_of(stored.decode()))
    async with writers.begin() as session:
        sample = await rows.any_sealed(session)
    if sample is not None:
        try:
            box.open(*sample)
        except ValueError:
            raise SettingsError(
                "SEED_KEY does not open the server seeds stored in the database: they were "
                "sealed with another key (the one kept in the database when SEED_KEY was unset)"
            ) from None
    return box


def new_server_seed() -> bytes:
    return secrets.token_bytes(SERVER_SEED_BYTES)


def proposed_client_seed() -> str:
    """The client seed proposed at sign-up: 16 random hex digits (the player may change it)."""
    return secrets.token_hex(8)


def checked_client_seed(client_seed: object) -> str:
    problem = client_seed_problem(client_seed)
    if problem is not None:
        raise InvalidInput(
            f"Invalid client seed: {problem}.",
            errors=[{"field": "client_seed", "message": problem}],
        )
    assert isinstance(client_seed, str)
    return client_seed


@dataclass(frozen=True, slots=True)
class Seeds:
    """A player's seeds as they see them (`GET /api/v1/me/seeds`)."""

    server_seed_hash: str
    client_seed: str
    nonce: int
    next_server_seed_hash: str


@dataclass(frozen=True, slots=True)
class EndedPair:
    """A pair rotated away, its server seed revealed."""

    server_seed: str
    server_seed_hash: str
    client_seed: str
    nonces: int
    """How many games it dealt (their nonces are 0 to nonces - 1)."""
    created_ms: int
    ended_ms: int
    position: int

    @classmethod
    def of(cls, pair: PairRecord) -> EndedPair:
        assert pair.revealed_seed is not None and pair.ended_ms is not None
        return cls(
            pair.revealed_seed,
            pair.server_seed_hash,
            pair.client_seed or "",
            pair.nonce,
            pair.created_ms,
            pair.ended_ms,
            pair.position,
        )


@dataclass(frozen=True, slots=True)
class SeedUse:
    """What dealt a server-dealt solo game: its pair, nonce and candidate (winnable-only)."""

    pair_id: str
    server_seed_hash: str
    client_seed: str
    nonce: int
    candidate: int | None = None


@dataclass(frozen=True, slots=True)
class Reserved:
    """A nonce taken for a game (the server seed in the clear: never leaves the process)."""

    use: SeedUse
    server_seed: bytes

    def code(self, rule: Rule, candidate: int | None = None) -> DealCode:
        message = game_message(self.use.client_seed, self.use.nonce, candidate)
        return seeded_code(self.server_seed, message, rule)


class SeedService:
    def __init__(
        self,
        readers: async_sessionmaker[AsyncSession],
        writers: async_sessionmaker[AsyncSession],
        box: SeedBox,
        clock: Clock = wall_clock_ms,
    ) -> None:
        self.readers = readers
        self.writers = writers
        self.box = box
        self.clock = clock

    # ---------------------------------------------------------------- pairs

    def _pair_values(
        self, player_id: str, position: int, state: str, client_seed: str | None
    ) -> dict[str, object]:
        seed = new_server_seed()
        digest = seed_hash(seed)
        return {
            "id": str(uuid.uuid4()),
            "player_id": player_id,
            "position": position,
            "state": state,
            "server_seed": self.box.seal(seed),
            "server_seed_hash": digest,
            "client_seed": client_seed,
            "nonce": 0,
            "revealed_seed": None,
            "created_ms": self.clock(),
            "ended_ms": None,
        }

    async def add_first_pairs(self, session: AsyncSession, player_id: str) -> None:
        """A new player's current pair (a proposed client seed) and next pair, in the
        sign-up's transaction."""
        await rows.insert_pair(
            session, **self._pair_values(player_id, 0, CURRENT, proposed_client_seed())
        )
        await rows.insert_pair(session, **self._pair_values(player_id, 1, NEXT, None))

    async def ensure(self, player_id: str) -> None:
        """Gives a player made before seeds existed their first pairs (once: if two requests
        do it at once, the unique position decides and both go on)."""
        async with self.readers.begin() as session:
            if await rows.live_pairs(session, player_id):
                return
        try:
            async with self.writers.begin() as session:
                if not await rows.live_pairs(session, player_id):
                    await self.add_first_pairs(session, player_id)
        except IntegrityError:
            pass  # made by another request meanwhile

    async def seeds(self, principal: Principal) -> Seeds:
        await self.ensure(principal.id)
        async with self.readers.begin() as session:
            pairs = await rows.live_pairs(session, principal.id)
        return _seeds_of(pairs)

    async def rotate(self, principal: Principal, client_seed: object) -> tuple[Seeds, EndedPair]:
        """Sets the next pair's client seed and makes it current; the current pair ends and
        its server seed is revealed. Games being dealt meanwhile take their nonce from the
        pair that was current when they took it (the rows are locked in the meantime)."""
        require(principal, "account")
        chosen = checked_client_seed(client_seed)
        await self.ensure(principal.id)
        now = self.clock()
        async with self.writers.begin() as session:
            # The player's row first: a rotation at the same time waits here, then reads the
            # pairs as that one left them (a statement of its own sees its commit).
            await player_rows.lock_players(session, [principal.id])
            pairs = await rows.live_pairs(session, principal.id, lock=True)
            current, following = pairs[CURRENT], pairs[NEXT]
            if await rows.pair_in_play(session, current.id):
                raise SeedInUse(
                    "A game dealt from your current seed is still in play: finish it or give it "
                    "up before rotating (its deal would follow from the revealed seed).",
                    rule="seed_in_use",
                )
            seed = self.box.open(current.server_seed, current.server_seed_hash)
            await rows.end_pair(session, current.id, seed.hex(), now)
            await rows.make_current(session, following.id, chosen)
            after = self._pair_values(principal.id, following.position + 1, NEXT, None)
            await rows.insert_pair(session, **after)
            pairs = await rows.live_pairs(session, principal.id)
        ended = replace(current, state="ended", revealed_seed=seed.hex(), ended_ms=now)
        return _seeds_of(pairs), EndedPair.of(ended)

    async def history(
        self, principal: Principal, limit: int = HISTORY_LIMIT, before: int | None = None
    ) -> list[EndedPair]:
        """The player's ended pairs, the latest first (`before`: positions below it)."""
        async with self.readers.begin() as session:
            ended = await rows.ended_pairs(session, principal.id, limit, before)
        return [EndedPair.of(p) for p in ended]

    # ---------------------------------------------------------------- dealing

    async def reserve(self, session: AsyncSession, player_id: str) -> Reserved:
        """Takes the next nonce of the player's current pair in `session`'s transaction (the
        caller made sure the player has pairs: `ensure`)."""
        for _ in range(3):
            pair = await rows.take_nonce(session, player_id)
            if pair is not None:
                break
            # A rotation committed while this statement waited for the pair's row: the next
            # statement sees the pair it made current.
        if pair is None:
            raise LookupError(f"player {player_id} has no seed pair")
        assert pair.client_seed is not None
        use = SeedUse(pair.id, pair.server_seed_hash, pair.client_seed, pair.nonce)
        return Reserved(use, self.box.open(pair.server_seed, pair.server_seed_hash))

    async def reserve_now(self, player_id: str) -> Reserved:
        """A nonce taken in a transaction of its own (a winnable-only game, whose candidates
        are certified before it is dealt)."""
        await self.ensure(player_id)
        async with self.writers.begin() as session:
            return await self.reserve(session, player_id)

    async def check_current(self, session: AsyncSession, use: SeedUse) -> None:
        """In the transaction that deals a winnable-only game: its pair is still current (its
        row locked until the game is stored), so that a rotation during the certification
        cannot reveal the seed of a game about to be dealt. Busy (`409`, retry) if it ended."""
        if await rows.pair_state(session, use.pair_id) != CURRENT:
            raise Busy("Your seed was rotated while this game was being dealt; ask again.")

    async def revealed(self, pair_ids: list[str]) -> dict[str, str]:
        """The revealed server seeds (hex) of the ended pairs among `pair_ids`."""
        async with self.readers.begin() as session:
            return await rows.revealed_seeds(session, pair_ids)


def _seeds_of(pairs: dict[str, PairRecord]) -> Seeds:
    current, following = pairs[CURRENT], pairs[NEXT]
    assert current.client_seed is not None
    return Seeds(
        current.server_seed_hash, current.client_seed, current.nonce, following.server_seed_hash
    )
