"""Passwords (SPEC 2.2): what a password may be, and its Argon2id hash by `argon2-cffi`.

The parameters are OWASP's first recommended configuration for Argon2id: 19 MiB of memory, two
passes, one lane (`m=19456, t=2, p=1`): about 33 ms a hash or a check on one core of the
2-core machines this server is measured on (`bench/accounts.py`), under the issue's 50 ms. A
hash holds its own parameters, so they can be raised later: a password whose hash has older
parameters is hashed again at its next sign-in (`needs_rehash`).

Hashing is costly on purpose, so it runs off the event loop (argon2-cffi releases the GIL), in
one thread of a process at a lowered priority (`NICENESS`, as the solver's workers are): a flood
of sign-ins waits for its turn, on at most one core, and the players' moves come first.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import unicodedata
from concurrent.futures import ThreadPoolExecutor

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from server.services.names import name_key

MIN_LENGTH = 10
MAX_LENGTH = 256
NICENESS = 10
"""How much lower than the server's the hashing thread's priority is (Linux: a thread's own)."""

HASHER = PasswordHasher(time_cost=2, memory_cost=19456, parallelism=1)


def _lower_priority() -> None:
    with contextlib.suppress(OSError, AttributeError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICENESS)


HASHING = ThreadPoolExecutor(1, "argon2", initializer=_lower_priority)
"""The one thread of a process that hashes: one hash at a time (each takes a core ~30 ms)."""

_DUMMY: str | None = None


def checked_password(raw: str, name: str) -> str:
    """The password to hash for `raw` (NFC), or ValueError saying what is wrong: 10 to 256
    characters, any Unicode, and not the player's name (compared as names are)."""
    password = unicodedata.normalize("NFC", raw)
    if len(password) < MIN_LENGTH:
        raise ValueError(f"a password has at least {MIN_LENGTH} characters")
    if len(password) > MAX_LENGTH:
        raise ValueError(f"a password has at most {MAX_LENGTH} characters")
    if name and name_key(password) == name_key(name):
        raise ValueError("the password must not be the player's name")
    return password


async def hash_password(password: str) -> str:
    return await asyncio.get_running_loop().run_in_executor(HASHING, HASHER.hash, password)


def _verify(stored: str | None, password: str) -> bool:
    global _DUMMY
    if stored is None:
        # No such name, or a guest: the same work as a real check, so that the time of the
        # answer does not tell which names exist.
        if _DUMMY is None:
            _DUMMY = HASHER.hash("no password matches this hash")
        stored = _DUMMY
        password = "\x00" + password
    try:
        return HASHER.verify(stored, password)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


async def verify_password(stored: str | None, password: str) -> bool:
    """Whether `password` is the one of `stored` (an Argon2 hash; None: there is none, and the
    answer is False after as long a check)."""
    given = unicodedata.normalize("NFC", password)
    return await asyncio.get_running_loop().run_in_executor(HASHING, _verify, stored, given)


def needs_rehash(stored: str) -> bool:
    return HASHER.check_needs_rehash(stored)
