"""Human explanations of refusals, in English, Romanian and Hebrew (SPEC 1.7, 2.3).

Each rule has a title (the rule's name in the app) and a detail template. Templates use only
what the player named or can see (the card, the place, the visible target card, the card a
foundation needs): never where a face-down card lies.
"""

from __future__ import annotations

from typing import Final

LANGUAGES: Final = ("en", "ro", "he")

TITLES: Final[dict[str, dict[str, str]]] = {
    "same_suit": {"en": "Same suit", "ro": "Aceeași culoare", "he": "אותו צבע"},
    "rank": {"en": "Mixed suits", "ro": "Culori amestecate", "he": "צבעים מעורבים"},
    "empty_column_king": {"en": "Empty column", "ro": "Coloană goală", "he": "עמודה ריקה"},
    "group_too_large": {"en": "Group limit", "ro": "Limita grupului", "he": "מגבלת קבוצה"},
    "face_down": {"en": "Face-down card", "ro": "Carte cu fața în jos", "he": "קלף הפוך"},
    "not_last_card": {"en": "Last card only", "ro": "Doar ultima carte", "he": "רק הקלף האחרון"},
    "foundation_order": {"en": "Foundation order", "ro": "Ordinea fundației", "he": "סדר היסוד"},
    "foundation_top": {"en": "Foundation top", "ro": "Vârful fundației", "he": "ראש היסוד"},
    "on_foundation": {"en": "Already on foundation", "ro": "Deja pe fundație", "he": "כבר ביסוד"},
    "same_column": {"en": "Same column", "ro": "Aceeași coloană", "he": "אותה עמודה"},
    "no_place": {"en": "No place", "ro": "Niciun loc", "he": "אין מקום"},
    "nothing_to_undo": {"en": "Undo", "ro": "Anulare", "he": "ביטול"},
    "game_over": {"en": "Game over", "ro": "Joc terminat", "he": "המשחק הסתיים"},
}

_DETAILS: Final[dict[str, dict[str, str]]] = {
    "same_suit": {
        "en": "{card} cannot go on {target}: a card goes only on the next higher card of the "
        "same family (suit).",
        "ro": "{card} nu poate fi pusă pe {target}: o carte se pune doar pe cartea imediat mai "
        "mare din aceeași familie.",
        "he": "אי אפשר להניח את {card} על {target}: קלף מונח רק על הקלף הגבוה ממנו בדרגה אחת "
        "מאותה משפחה.",
    },
    "rank": {
        "en": "{card} cannot go on {target}: a card goes only on a card exactly one rank higher.",
        "ro": "{card} nu poate fi pusă pe {target}: o carte se pune doar pe o carte cu exact un "
        "rang mai mare.",
        "he": "אי אפשר להניח את {card} על {target}: קלף מונח רק על קלף הגבוה ממנו בדרגה אחת בדיוק.",
    },
    "empty_column_king": {
        "en": "Only a king, alone or with the cards on top of it, can go to an empty column.",
        "ro": "Doar un rege, singur sau cu cărțile de deasupra lui, poate fi mutat pe o coloană "
        "goală.",
        "he": "רק מלך, לבד או עם הקלפים שמעליו, יכול לעבור לעמודה ריקה.",
    },
    "group_too_large": {
        "en": "A group of more than 20 cards cannot be moved in one move.",
        "ro": "Un grup de peste 20 de cărți nu poate fi mutat dintr-o singură mutare.",
        "he": "אי אפשר להזיז קבוצה של יותר מ-20 קלפים במהלך אחד.",
    },
    "face_down": {
        "en": "{card} is not face-up: only face-up cards can be moved.",
        "ro": "{card} nu este cu fața în sus: doar cărțile cu fața în sus pot fi mutate.",
        "he": "הקלף {card} אינו גלוי: אפשר להזיז רק קלפים גלויים.",
    },
    "not_last_card": {
        "en": "Only the last card of a column can go to a foundation.",
        "ro": "Doar ultima carte a unei coloane poate fi pusă pe fundație.",
        "he": "רק הקלף האחרון בעמודה יכול לעבור ליסוד.",
    },
    "foundation_order": {
        "en": "{card} cannot go to its foundation yet: each foundation is built up by suit from "
        "the ace to the king.",
        "ro": "{card} nu poate fi pusă încă pe fundație: fiecare fundație se construiește pe "
        "culoare, de la as la rege.",
        "he": "עדיין אי אפשר להעביר את {card} ליסוד: כל יסוד נבנה לפי צורה מהאס ועד המלך.",
    },
    "foundation_top": {
        "en": "Only the top card of a foundation can be taken back.",
        "ro": "Doar cartea de deasupra unei fundații poate fi luată înapoi.",
        "he": "אפשר להחזיר רק את הקלף העליון של יסוד.",
    },
    "on_foundation": {
        "en": "{card} is already on its foundation.",
        "ro": "{card} este deja pe fundația sa.",
        "he": "הקלף {card} כבר נמצא ביסוד שלו.",
    },
    "same_column": {
        "en": "{card} is already in column {place}.",
        "ro": "{card} este deja în coloana {place}.",
        "he": "הקלף {card} כבר נמצא בעמודה {place}.",
    },
    "no_place": {
        "en": "There is no place where {card} can go.",
        "ro": "Nu există niciun loc unde {card} poate fi mutată.",
        "he": "אין מקום שאליו אפשר להעביר את {card}.",
    },
    "nothing_to_undo": {
        "en": "There is no move to undo.",
        "ro": "Nu există nicio mutare de anulat.",
        "he": "אין מהלך לבטל.",
    },
    "game_over": {
        "en": "The game is over: no more moves can be made.",
        "ro": "Jocul s-a terminat: nu se mai pot face mutări.",
        "he": "המשחק הסתיים: אי אפשר לבצע עוד מהלכים.",
    },
}

RULES: Final = tuple(TITLES)


def negotiate(accept_language: str | None) -> str:
    """The best of `LANGUAGES` for an `Accept-Language` header value (English by default)."""
    if not accept_language:
        return "en"
    best, best_q = "en", -1.0
    for position, item in enumerate(accept_language.split(",")):
        tag, _, params = item.strip().partition(";")
        lang = tag.strip().lower().split("-")[0]
        if lang == "iw":
            lang = "he"
        q = 1.0
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name.strip() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        if lang in LANGUAGES and q > 0 and q - position * 1e-6 > best_q:
            best, best_q = lang, q - position * 1e-6
    return best


def explain(rule: str, lang: str, params: dict[str, str]) -> str:
    """The explanation of `rule` in `lang` with its parameters filled in."""
    texts = _DETAILS.get(rule)
    if texts is None:
        return rule
    template = texts.get(lang, texts["en"])
    values = {"card": "", "target": "", "place": "", "needed": ""}
    values.update(params)
    return template.format(**values)


def title(rule: str, lang: str) -> str:
    texts = TITLES.get(rule)
    if texts is None:
        return rule
    return texts.get(lang, texts["en"])
