from __future__ import annotations

from tests.conftest import Api, load_data


async def test_vector_games_play_to_the_end_over_http(api: Api) -> None:
    _, auth = await api.player()
    for vector in load_data("games.json")["games"]:
        game = await api.game(auth, code=vector["code"])
        for text in vector["actions"]:
            if text == "undo":
                body = {"action": "undo"}
            else:
                card, to = text.split("-")
                body = {"card": card, "to": to}
            result = await api.act(auth, game["id"], body)
            assert result["move"] == text
        final = result["game"]
        assert (final["status"], final["score"], final["moves"]) == (
            vector["status"],
            vector["score"],
            vector["moves"],
        )
