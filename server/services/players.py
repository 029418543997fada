"""The use-cases of players (SPEC 2.2, 2.2.2, 1.7): sign-up (a guest, or with a password), the
public profile, the play settings, one's own account (`me`), a password added or changed, and
the account's erasure. Sessions and who a token is: `server.services.sessions`."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from server.services.errors import Forbidden, InvalidInput, NameTaken, NotFound, WrongPassword
from server.services.names import name_key
from server.services.passwords import hash_password, verify_password
from server.services.seeds import SeedService
from server.services.sessions import SessionInfo, SessionService, require
from server.services.values import Clock, Principal, wall_clock_ms
from server.store import notices as notice_rows
from server.store import players as player_rows
from server.store import sessions as session_rows
from server.store.models import Player

SETTING_NAMES = ("double_click", "placement_help", "interactive_rules", "auto_placement")


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
    session: SessionInfo


@dataclass(frozen=True, slots=True)
class Me:
    """The player of a token, as they see themselves (`GET /api/v1/me`)."""

    id: str
    name: str
    created_ms: int
    has_password: bool
    session: SessionInfo


class PlayerService:
    def __init__(
        self,
        readers: async_sessionmaker[AsyncSession],
        writers: async_sessionmaker[AsyncSession],
        sessions: SessionService,
        clock: Clock = wall_clock_ms,
        *,
        seeds: SeedService | None = None,
    ) -> None:
        self.readers = readers
        self.writers = writers
        self.sessions = sessions
        self.clock = clock
        self.seeds = seeds

    async def create_player(
        self, name: str, password: str | None = None, label: str | None = None
    ) -> NewPlayer:
        """A new player and their first session; `name` (and `password`, if any) already
        checked (`server.services.names.checked_name`, `passwords.checked_password`). No two
        players share a name's key: NameTaken (409) if another has it."""
        player_id = str(uuid.uuid4())
        password_hash = await hash_password(password) if password is not None else None
        try:
            async with self.writers.begin() as session:
                await player_rows.insert_player(
                    session,
                    id=player_id,
                    name=name,
                    name_key=name_key(name),
                    password_hash=password_hash,
                    created_ms=self.clock(),
                    **player_rows.DEFAULT_SETTINGS,
                )
                token, record = await self.sessions.add(session, player_id, label or "sign-up")
                if self.seeds is not None:  # the first seed pairs (SPEC 1.8.2)
                    await self.seeds.add_first_pairs(session, player_id)
        except IntegrityError:
            raise NameTaken(name) from None  # the unique index on name_key
        return NewPlayer(player_id, name, token, SessionInfo.of(record, record.id))

    async def me(self, principal: Principal) -> Me:
        async with self.readers.begin() as session:
            player = await player_rows.player_by_id(session, principal.id)
        if player is None:
            raise NotFound("This player's account was erased.")
        current = await self.sessions.current(principal)
        return Me(
            player.id, player.name, player.created_ms, player.password_hash is not None, current
        )

    async def change_password(
        self, principal: Principal, password: str, current_password: str | None
    ) -> None:
        """Sets the player's password (a guest's first one, or a new one): the current one
        must be given when one is set. Every other session of the player ends at once."""
        require(principal, "account")
        player = await self._checked_password(principal, current_password)
        new_hash = await hash_password(password)
        async with self.writers.begin() as session:
            await player_rows.update_player(session, player.id, password_hash=new_hash)
            ended = await session_rows.delete_sessions_of(
                session, principal.id, keep=principal.session_id
            )
            await self.sessions.revoking(session, principal.id, ended)
        await self.sessions.revoked(principal.id, ended)

    async def erase(self, principal: Principal, password: str | None) -> None:
        """Erases the player's account (SPEC 2.2.2); their password must be given when one is
        set. Every token of theirs is refused from then on."""
        require(principal, "account")
        player = await self._checked_password(principal, password, field="password")
        async with self.writers.begin() as session:
            ended = await player_rows.erase_player(session, player.id, self.clock())
            await notice_rows.forget(session, player.id)
            # Then the revocations, told to the player's other sessions (their streams and
            # sockets end on them): the only notices an erased account keeps.
            await self.sessions.revoking(session, principal.id, ended)
        await self.sessions.revoked(principal.id, ended)

    async def _checked_password(
        self, principal: Principal, given: str | None, field: str = "current_password"
    ) -> Player:
        async with self.readers.begin() as session:
            player = await player_rows.player_by_id(session, principal.id)
        if player is None:
            raise NotFound("This player's account was erased.")
        if player.password_hash is None:
            return player
        if given is None:
            raise InvalidInput(
                f"This account has a password: give it as {field!r}.",
                errors=[{"field": field, "message": "the account's password is needed"}],
            )
        if not await verify_password(player.password_hash, given):
            raise WrongPassword()
        return player

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
        require(principal, "account")
        async with (self.writers if changes else self.readers).begin() as session:
            if changes:
                await player_rows.update_player(session, player_id, **changes)
            player = await player_rows.player_by_id(session, player_id)
            assert player is not None
            return PlayerInfo.of(player)
