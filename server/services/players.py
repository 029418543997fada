"""The use-cases of players (SPEC 2.2, 1.7): sign-up, who a bearer token is, the public
profile and the play settings.

A token is stored as its SHA-256 hash only. Tokens never change, so the principal of a token is
remembered once verified (the most recent 10,000), and a made-up token once looked up is not
looked up again (a token reaches its client only once its player is stored, so one unknown now
stays unknown).
"""

from __future__ import annotations

import hashlib
import secrets
import uuid
from collections import OrderedDict
from dataclasses import dataclass

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from server.services.errors import Forbidden, NameTaken, NotFound, Unauthorized
from server.services.names import name_key
from server.services.values import Clock, Principal, is_printable_ascii, wall_clock_ms
from server.store import players as player_rows
from server.store.models import Player

REMEMBERED = 10_000
"""How many verified tokens, and how many unknown ones, a process remembers."""

SETTING_NAMES = ("double_click", "placement_help", "interactive_rules", "auto_placement")


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class PlayerInfo:
    id: str
    name: str
    created_ms: int
    settings: dict[str, bool]

    @classmethod
    def of(cls, player: Player) -> PlayerInfo:
        settings = {name: bool(getattr(player, name)) for name in SETTING_NAMES}
        return cls(player.id, player.name, player.created_ms, settings)


@dataclass(frozen=True, slots=True)
class NewPlayer:
    id: str
    name: str
    token: str


class PlayerService:
    def __init__(
        self,
        readers: async_sessionmaker[AsyncSession],
        writers: async_sessionmaker[AsyncSession],
        clock: Clock = wall_clock_ms,
    ) -> None:
        self.readers = readers
        self.writers = writers
        self.clock = clock
        self._principals: OrderedDict[str, Principal] = OrderedDict()
        self._unknown: OrderedDict[str, None] = OrderedDict()
        """Hashes of tokens looked up and found to be no player's."""

    async def create_player(self, name: str) -> NewPlayer:
        """A new player; `name` is already checked (`server.services.names.checked_name`). No two
        players share a name's key: NameTaken (409) if another has it."""
        token = secrets.token_urlsafe(32)
        player_id = str(uuid.uuid4())
        try:
            async with self.writers.begin() as session:
                await player_rows.insert_player(
                    session,
                    id=player_id,
                    name=name,
                    name_key=name_key(name),
                    token_hash=hash_token(token),
                    created_ms=self.clock(),
                    double_click=True,
                    placement_help=True,
                    interactive_rules=True,
                    auto_placement=False,
                )
        except IntegrityError:
            raise NameTaken(name) from None  # the unique index on name_key
        return NewPlayer(player_id, name, token)

    async def authenticate(self, token: str) -> Principal:
        """The player whose token this is. A token is printable ASCII (ours are URL-safe
        base64): anything else is no token of ours."""
        if not is_printable_ascii(token):
            raise Unauthorized("The bearer token is not valid.")
        token_hash = hash_token(token)
        cached = self._principals.get(token_hash)
        if cached is not None:
            return cached
        if token_hash in self._unknown:
            raise Unauthorized("The bearer token is not valid.")
        async with self.readers.begin() as session:
            found = await player_rows.player_by_token_hash(session, token_hash)
        if found is None:
            self._unknown[token_hash] = None
            if len(self._unknown) > REMEMBERED:
                self._unknown.popitem(last=False)
            raise Unauthorized("The bearer token is not valid.")
        principal = Principal(*found)
        self._principals[token_hash] = principal
        if len(self._principals) > REMEMBERED:
            self._principals.popitem(last=False)
        return principal

    async def get_player(self, player_id: str) -> PlayerInfo:
        async with self.readers.begin() as session:
            player = await player_rows.player_by_id(session, player_id)
            if player is None:
                raise NotFound(f"There is no player {player_id!r}.")
            return PlayerInfo.of(player)

    async def update_settings(
        self, principal: Principal, player_id: str, changes: dict[str, bool]
    ) -> PlayerInfo:
        """Changes some (or, to read them, none) of the player's own play settings."""
        if principal.id != player_id:
            raise Forbidden("Only the player may read or change their settings.")
        async with (self.writers if changes else self.readers).begin() as session:
            if changes:
                await player_rows.update_player(session, player_id, **changes)
            player = await player_rows.player_by_id(session, player_id)
            assert player is not None
            return PlayerInfo.of(player)
