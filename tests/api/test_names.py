"""Player names (issue 14): NFC, never blank-looking, at most 32 visible characters, no stacks of
combining marks, and no two players with the same name ignoring case (409)."""

from __future__ import annotations

import asyncio
import unicodedata
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from tests.api.helpers import problem

PLAYERS = "/api/v1/players"

BLANK_LOOKING = [
    "\u3164",  # HANGUL FILLER
    "\u115f",  # HANGUL CHOSEONG FILLER
    "\u1160",  # HANGUL JUNGSEONG FILLER
    "\uffa0",  # HALFWIDTH HANGUL FILLER
    "\u2800",  # BRAILLE PATTERN BLANK
    "\u3164\u3164\u3164",
    " \u2800 \u3164 ",
    "\u200b",  # ZERO WIDTH SPACE
    "\u200c\u200d",  # zero-width non-joiner and joiner
    "\u2060",  # WORD JOINER
    "\ufeff",  # ZERO WIDTH NO-BREAK SPACE
    "\u180e",  # MONGOLIAN VOWEL SEPARATOR
    "\u2062\u2063\u2064",  # invisible times, separator, plus
    "\u00ad",  # SOFT HYPHEN
    "\u034f",  # COMBINING GRAPHEME JOINER
    "\u2028",  # LINE SEPARATOR
    "\u3000",  # IDEOGRAPHIC SPACE
    "\u00a0\u00a0",  # NO-BREAK SPACE
    "\u0301\u0301",  # combining marks and nothing under them
    "\ufe0f",  # a variation selector alone
]


async def sign_up(client: TestClient[Any, Any], name: str) -> Any:
    response = await client.post(PLAYERS, json={"name": name})
    return response


async def created(client: TestClient[Any, Any], name: str) -> dict[str, Any]:
    response = await sign_up(client, name)
    assert response.status == 201, await response.text()
    body: dict[str, Any] = await response.json()
    return body


async def refused(client: TestClient[Any, Any], name: str) -> dict[str, Any]:
    """A 422 problem that names the field `name`."""
    body = await problem(await sign_up(client, name), 422)
    assert body["type"].endswith("/problems/validation-error"), body
    assert [e["field"] for e in body["errors"]] == ["name"], body
    return body


@pytest.mark.parametrize("name", BLANK_LOOKING, ids=[repr(n) for n in BLANK_LOOKING])
async def test_a_blank_looking_name_is_refused(client: TestClient[Any, Any], name: str) -> None:
    await refused(client, name)


async def test_invisible_characters_inside_a_name_are_refused(
    client: TestClient[Any, Any],
) -> None:
    """A filler or a zero-width character between letters would make a second "Ana Bo"."""
    for name in ("Ana\u3164Bo", "Ana\u2800Bo", "Ana\u200bBo", "A\u115fna", "Ana\u00a0Bo"):
        body = await refused(client, name)
        assert "U+" in body["errors"][0]["message"], body
    # Nothing was stored: the name is still free.
    assert (await created(client, "Ana Bo"))["name"] == "Ana Bo"


async def test_at_most_32_visible_characters(client: TestClient[Any, Any]) -> None:
    assert (await created(client, "a" * 32))["name"] == "a" * 32
    body = await refused(client, "b" * 33)
    assert "32" in body["errors"][0]["message"], body
    # Combining marks are not counted: 32 letters with an accent each (64 code points
    # decomposed, as a client may send them) are 32 characters.
    accented = "e\u0301" * 31 + "x"
    assert (await created(client, accented))["name"] == unicodedata.normalize("NFC", accented)
    await refused(client, "e\u0301" * 33)
    # Few visible characters, but over 64 code points once NFC (q has no accented forms).
    await refused(client, "q\u0301\u0302" * 22)
    # Decomposed text over 64 code points that NFC makes 22 characters (ỗ) is a name.
    assert (await created(client, "o\u0302\u0303" * 22))["name"] == "\u1ed7" * 22
    # Surrounding white space is not part of the name.
    assert (await created(client, "   " + "c" * 32 + "   "))["name"] == "c" * 32


async def test_stacks_of_combining_marks_are_refused(client: TestClient[Any, Any]) -> None:
    zalgo = "Z" + "\u0300\u0301\u0302\u0303\u0304\u0305\u0306\u0307" + "algo"
    for name in (zalgo, "a\u0301\u0301\u0301\u0301", "\u0301Ana", "Ana \u0301"):
        body = await refused(client, name)
        assert "mark" in body["errors"][0]["message"], body
    # Up to three marks on a letter are writing, not a stack (Vietnamese, Hebrew vowels).
    for name in ("Nguy\u1ec5n Th\u1ecb", "\u05e9\u05c1\u05b8\u05dc\u05d5\u05b9\u05dd"):
        assert (await created(client, name))["name"] == unicodedata.normalize("NFC", name)


async def test_two_players_cannot_share_a_name_ignoring_case(
    client: TestClient[Any, Any],
) -> None:
    first = await created(client, "Ana Maria")
    for same in ("ana maria", "ANA MARIA", "  aNa MaRiA ", "Ana  Maria", "\uff21na Maria"):
        body = await problem(await sign_up(client, same), 409)
        assert body["type"].endswith("/problems/name-taken"), body
        assert body["errors"][0]["field"] == "name", body
    # The first player keeps the name; a different one is still free.
    response = await client.get(f"{PLAYERS}/{first['id']}")
    assert (await response.json())["name"] == "Ana Maria"
    assert (await created(client, "Ana Marian"))["name"] == "Ana Marian"
    # German sharp s folds to "ss" (casefold, not lower).
    await created(client, "Strauß")
    await problem(await sign_up(client, "STRAUSS"), 409)


async def test_names_are_nfc_and_compared_in_nfc(client: TestClient[Any, Any]) -> None:
    decomposed = "Zoe\u0301"  # e + COMBINING ACUTE ACCENT
    composed = "Zo\u00e9"  # é
    first = await created(client, decomposed)
    assert first["name"] == composed  # stored and shown NFC
    response = await client.get(f"{PLAYERS}/{first['id']}")
    assert (await response.json())["name"] == composed
    body = await problem(await sign_up(client, composed), 409)
    assert body["type"].endswith("/problems/name-taken"), body
    await problem(await sign_up(client, "ZOE\u0301"), 409)
    # A variation selector changes nothing a reader sees.
    await problem(await sign_up(client, "Zo\u00e9\ufe0f"), 409)


async def test_one_of_two_sign_ups_with_one_name_at_once_gets_it(
    client: TestClient[Any, Any],
) -> None:
    responses = await asyncio.gather(*(sign_up(client, "Twin") for _ in range(4)))
    statuses = sorted(r.status for r in responses)
    assert statuses == [201, 409, 409, 409], statuses
    for response in responses:
        if response.status == 409:
            await problem(response, 409)
