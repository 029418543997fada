"""Problem documents in the language asked for (SPEC 2.3, 2.7): the `title` and the `detail` of
every problem, and the `message` of each of its `errors`, in English, Romanian and Hebrew.

The server words its problems in English where it raises them; this catalogue, gettext-style,
keys each translation by its English text. A text with varying parts is a template: `{name}` is a
part copied as it is (an id, a name, a figure, a code, the JSON parser's own words) and
`{name*}` a part that is itself a text of the catalogue (the kind of thing a notation error is
about, the reason it gives), translated in turn. A `title` comes from the problem's page (the
heading of its section in `server/rules/problems.<lang>.md`), so the page and the documents it
explains say the same; an illegal move's `detail` comes from the engine's own texts
(`server/engine/messages.py`).

Decisions where the spec is silent:
- A text the catalogue does not know stays in English (the problem's `type`, `rule` and
  `errors[].field` say what it is in any language), and the answer still names the asked
  language in `Content-Language`, as the language of its audience (RFC 9110 8.5): the figures,
  identifiers and names quoted inside a detail are never translated.
- A validation problem's `detail` is its `errors` joined (`field: message; ...`): it is joined
  again from the translated messages.
- Every problem with a `rule` that the rules page defines links to it: `rule_url`
  (`/rules#rule-<rule>`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any, Final

from server.api.rules import problem_title, rule_url

PLACEHOLDER = re.compile(r"\{([a-z_]+)(\*?)\}")

# English text → {language: text}. Keep the placeholders' names the same in each language.
CATALOGUE: Final[dict[str, dict[str, str]]] = {
    # ---------------------------------------------------------------- bodies and messages
    "The body could not be read: {error}.": {
        "ro": "Corpul nu a putut fi citit: {error}.",
        "he": "לא ניתן היה לקרוא את הגוף: {error}.",
    },
    "The body is JSON nested too deeply for this server.": {
        "ro": "Corpul este JSON imbricat prea adânc pentru acest server.",
        "he": "הגוף הוא JSON מקונן עמוק מדי עבור השרת הזה.",
    },
    "The body is not JSON: {error}.": {
        "ro": "Corpul nu este JSON: {error}.",
        "he": "הגוף אינו JSON: {error}.",
    },
    "The message is not JSON: {error}.": {
        "ro": "Mesajul nu este JSON: {error}.",
        "he": "ההודעה אינה JSON: {error}.",
    },
    "A message is a JSON object.": {
        "ro": "Un mesaj este un obiect JSON.",
        "he": "הודעה היא אובייקט JSON.",
    },
    "expected a JSON object": {"ro": "se aștepta un obiect JSON", "he": "נדרש אובייקט JSON"},
    "There is nothing at this address.": {
        "ro": "Nu există nimic la această adresă.",
        "he": "אין כלום בכתובת הזו.",
    },
    "This method is not allowed here.": {
        "ro": "Această metodă nu este permisă aici.",
        "he": "השיטה הזו אינה מותרת כאן.",
    },
    "The request body is larger than this server accepts.": {
        "ro": "Corpul cererii este mai mare decât acceptă acest server.",
        "he": "גוף הבקשה גדול ממה שהשרת הזה מקבל.",
    },
    "The server failed to answer.": {
        "ro": "Serverul nu a reușit să răspundă.",
        "he": "השרת לא הצליח לענות.",
    },
    "The database cannot take this request now; try again shortly.": {
        "ro": "Baza de date nu poate primi această cerere acum; încercați din nou în curând.",
        "he": "מסד הנתונים אינו יכול לקבל את הבקשה הזו כעת; נסו שוב בקרוב.",
    },
    "Redis cannot be reached now; try again shortly.": {
        "ro": "Redis nu poate fi atins acum; încercați din nou în curând.",
        "he": "אי אפשר להגיע ל-Redis כעת; נסו שוב בקרוב.",
    },
    "The database does not answer.": {
        "ro": "Baza de date nu răspunde.",
        "he": "מסד הנתונים אינו עונה.",
    },
    # aiohttp's own refusals and the connection caps (server/api/connections.py)
    "The request is not HTTP that this server reads: {reason}": {
        "ro": "Cererea nu este HTTP pe care acest server îl citește: {reason}",
        "he": "הבקשה אינה HTTP שהשרת הזה קורא: {reason}",
    },
    "The body's Content-Encoding {encoding} is not one this server decodes: send it gzip or "
    "deflate, or not encoded.": {
        "ro": "Content-Encoding {encoding} al corpului nu este unul pe care acest server îl "
        "decodează: trimiteți-l gzip sau deflate, sau necodat.",
        "he": "Content-Encoding {encoding} של הגוף אינו קידוד שהשרת הזה מפענח: שלחו אותו "
        "ב-gzip או ב-deflate, או ללא קידוד.",
    },
    "This server meets no expectation but Expect: 100-continue.": {
        "ro": "Acest server nu îndeplinește nicio așteptare în afară de Expect: 100-continue.",
        "he": "השרת הזה אינו עונה על שום ציפייה מלבד Expect: 100-continue.",
    },
    "The body did not arrive within {seconds} s of the request's head.": {
        "ro": "Corpul nu a sosit în {seconds} s de la antetul cererii.",
        "he": "הגוף לא הגיע בתוך {seconds} שניות מכותרת הבקשה.",
    },
    "This address has {count} connections open to this server, as many as one address may: "
    "send this request on one of them.": {
        "ro": "Această adresă are {count} conexiuni deschise către acest server, câte poate "
        "avea o adresă: trimiteți cererea pe una dintre ele.",
        "he": "לכתובת הזו יש {count} חיבורים פתוחים לשרת הזה, כמה שכתובת אחת רשאית: שלחו את "
        "הבקשה באחד מהם.",
    },
    "The server took too long to answer.": {
        "ro": "Serverului i-a luat prea mult să răspundă.",
        "he": "לשרת לקח יותר מדי זמן לענות.",
    },
    "This address is a WebSocket endpoint: connect with an Upgrade: websocket request.": {
        "ro": "Această adresă este un punct WebSocket: conectați-vă cu o cerere "
        "Upgrade: websocket.",
        "he": "הכתובת הזו היא נקודת קצה של WebSocket: התחברו בבקשת Upgrade: websocket.",
    },
    "There is no problem type {slug}.": {
        "ro": "Nu există tipul de problemă {slug}.",
        "he": "אין סוג בעיה {slug}.",
    },
    "There is no file {name} in the web client.": {
        "ro": "Nu există fișierul {name} în clientul web.",
        "he": "אין קובץ {name} בלקוח האינטרנט.",
    },
    "There is no resource {name}.": {
        "ro": "Nu există resursa {name}.",
        "he": "אין משאב {name}.",
    },
    # ---------------------------------------------------------------- tokens and accounts
    "The bearer token is not valid.": {
        "ro": "Tokenul de acces nu este valid.",
        "he": "אסימון הגישה אינו תקף.",
    },
    "This call needs 'Authorization: Bearer <token>'.": {
        "ro": "Această cerere are nevoie de 'Authorization: Bearer <token>'.",
        "he": "הקריאה הזו צריכה 'Authorization: Bearer <token>'.",
    },
    "The Authorization header must be 'Bearer <token>'.": {
        "ro": "Antetul Authorization trebuie să fie 'Bearer <token>'.",
        "he": "הכותרת Authorization חייבת להיות 'Bearer <token>'.",
    },
    "Send an auth message (or connect with a bearer token) first.": {
        "ro": "Trimiteți întâi un mesaj auth (sau conectați-vă cu un token).",
        "he": "שלחו קודם הודעת auth (או התחברו עם אסימון).",
    },
    "This token was not granted the scope {scope}, which this request needs.": {
        "ro": "Acestui token nu i s-a acordat permisiunea {scope}, de care are nevoie cererea.",
        "he": "האסימון הזה לא קיבל את ההרשאה {scope}, שהבקשה הזו צריכה.",
    },
    "The name or the password is wrong.": {
        "ro": "Numele sau parola sunt greșite.",
        "he": "השם או הסיסמה שגויים.",
    },
    "Too many failed sign-ins with this name lately: try again later.": {
        "ro": "Prea multe conectări eșuate cu acest nume în ultima vreme: încercați mai târziu.",
        "he": "יותר מדי התחברויות כושלות בשם הזה לאחרונה: נסו שוב מאוחר יותר.",
    },
    "The password is wrong.": {"ro": "Parola este greșită.", "he": "הסיסמה שגויה."},
    "This player's account was erased.": {
        "ro": "Contul acestui jucător a fost șters.",
        "he": "החשבון של השחקן הזה נמחק.",
    },
    "This account has a password: give it as {field}.": {
        "ro": "Acest cont are o parolă: dați-o în {field}.",
        "he": "לחשבון הזה יש סיסמה: תנו אותה בשדה {field}.",
    },
    "the account's password is needed": {
        "ro": "este nevoie de parola contului",
        "he": "נדרשת הסיסמה של החשבון",
    },
    "Another player is already called “{name}” (names are compared ignoring case, accents "
    "written either way and look-alike forms): choose another name.": {
        "ro": "Un alt jucător se numește deja „{name}” (numele se compară fără a ține seama de "
        "litere mari sau mici, de diacritice și de formele care seamănă): alegeți alt nume.",
        "he": "לשחקן אחר כבר קוראים „{name}” (שמות מושווים בלי הבדל בין אותיות גדולות "
        "לקטנות, בין סימני ניקוד ובין צורות דומות): בחרו שם אחר.",
    },
    "another player is already called “{name}”": {
        "ro": "un alt jucător se numește deja „{name}”",
        "he": "לשחקן אחר כבר קוראים „{name}”",
    },
    "There is no player {id}.": {"ro": "Nu există jucătorul {id}.", "he": "אין שחקן {id}."},
    "There is no session {id} of this player.": {
        "ro": "Acest jucător nu are sesiunea {id}.",
        "he": "אין לשחקן הזה חיבור {id}.",
    },
    "Only the player may read or change their settings.": {
        "ro": "Doar jucătorul își poate citi sau schimba setările.",
        "he": "רק השחקן עצמו יכול לקרוא או לשנות את ההגדרות שלו.",
    },
    "a password has at least {n} characters": {
        "ro": "o parolă are cel puțin {n} caractere",
        "he": "בסיסמה יש לפחות {n} תווים",
    },
    "a password has at most {n} characters": {
        "ro": "o parolă are cel mult {n} caractere",
        "he": "בסיסמה יש לכל היותר {n} תווים",
    },
    "the password must not be the player's name": {
        "ro": "parola nu poate fi numele jucătorului",
        "he": "הסיסמה אינה יכולה להיות שם השחקן",
    },
    "the name is longer than {n} characters": {
        "ro": "numele are mai mult de {n} caractere",
        "he": "השם ארוך מ-{n} תווים",
    },
    "the name is longer than {n} code points": {
        "ro": "numele are mai mult de {n} puncte de cod",
        "he": "השם ארוך מ-{n} נקודות קוד",
    },
    "the name holds an invisible or control character ({char})": {
        "ro": "numele conține un caracter invizibil sau de control ({char})",
        "he": "בשם יש תו בלתי נראה או תו בקרה ({char})",
    },
    "a combining mark in the name follows no letter": {
        "ro": "un semn diacritic combinat din nume nu urmează nicio literă",
        "he": "סימן מצטרף בשם אינו בא אחרי אות",
    },
    "the name stacks more than {n} combining marks on one character": {
        "ro": "numele pune mai mult de {n} semne diacritice combinate pe un caracter",
        "he": "השם מערים יותר מ-{n} סימנים מצטרפים על תו אחד",
    },
    "the name is too long once its compatibility characters are spelled out": {
        "ro": "numele este prea lung odată ce caracterele lui de compatibilitate sunt scrise în "
        "întregime",
        "he": "השם ארוך מדי כשתווי התאימות שלו נכתבים במלואם",
    },
    "the name is blank: it has no visible character": {
        "ro": "numele este gol: nu are niciun caracter vizibil",
        "he": "השם ריק: אין בו אף תו גלוי",
    },
    # ---------------------------------------------------------------- games
    "There is no game {id}.": {"ro": "Nu există jocul {id}.", "he": "אין משחק {id}."},
    "There is no race {id}.": {"ro": "Nu există cursa {id}.", "he": "אין מרוץ {id}."},
    "There is no {what*} {id}.": {"ro": "Nu există {what} {id}.", "he": "אין {what} {id}."},
    "game": {"ro": "jocul", "he": "משחק"},
    "race": {"ro": "cursa", "he": "מרוץ"},
    "This game belongs to another player.": {
        "ro": "Acest joc aparține altui jucător.",
        "he": "המשחק הזה שייך לשחקן אחר.",
    },
    "This is a game of a race that is still on: only its racer may see it until the race ends.": {
        "ro": "Acesta este jocul unei curse care încă se desfășoară: doar concurentul lui îl "
        "poate vedea până la sfârșitul cursei.",
        "he": "זה משחק של מרוץ שעדיין נמשך: רק המתחרה שלו יכול לראות אותו עד סוף המרוץ.",
    },
    "This is a game of the daily deal of {day}: only its player may see it until the day ends "
    "(UTC).": {
        "ro": "Acesta este un joc al împărțirii zilei de {day}: doar jucătorul lui îl poate "
        "vedea până la sfârșitul zilei (UTC).",
        "he": "זה משחק של החלוקה היומית של {day}: רק השחקן שלו יכול לראות אותו עד סוף היום (UTC).",
    },
    "The game is at version {version}, not {expected}.": {
        "ro": "Jocul este la versiunea {version}, nu {expected}.",
        "he": "המשחק נמצא בגרסה {version}, לא {expected}.",
    },
    "Other changes to this game kept coming first; try again.": {
        "ro": "Alte schimbări ale acestui joc au venit mereu primele; încercați din nou.",
        "he": "שינויים אחרים במשחק הזה הקדימו שוב ושוב; נסו שוב.",
    },
    "This Idempotency-Key was already used for another request.": {
        "ro": "Acest Idempotency-Key a fost deja folosit pentru o altă cerere.",
        "he": "ה-Idempotency-Key הזה כבר שימש לבקשה אחרת.",
    },
    "Only the player of a game may ask for a hint.": {
        "ro": "Doar jucătorul unui joc poate cere un indiciu.",
        "he": "רק השחקן של משחק יכול לבקש רמז.",
    },
    "There was no {rule} daily deal on {day}.": {
        "ro": "Nu a existat o împărțire a zilei {rule} pe {day}.",
        "he": "לא הייתה חלוקה יומית {rule} ב-{day}.",
    },
    "the query parameter is required": {
        "ro": "parametrul este obligatoriu",
        "he": "הפרמטר הוא חובה",
    },
    "expected true or false (and nothing else)": {
        "ro": "se aștepta true sau false (și nimic altceva)",
        "he": "נדרש true או false (ושום דבר אחר)",
    },
    "expected classic or relaxed": {
        "ro": "se aștepta classic sau relaxed",
        "he": "נדרש classic או relaxed",
    },
    "expected a date YYYY-MM-DD": {
        "ro": "se aștepta o dată AAAA-LL-ZZ (YYYY-MM-DD)",
        "he": "נדרש תאריך YYYY-MM-DD",
    },
    "expected {'move': '<move text>'}": {
        "ro": "se aștepta {'move': '<textul mutării>'}",
        "he": "נדרש {'move': '<טקסט המהלך>'}",
    },
    "a replay without its code cannot be verified: the code is shown once the game's deal is "
    "revealed (the game has ended, or its daily deal's day)": {
        "ro": "o reluare fără codul ei nu poate fi verificată: codul se arată odată ce împărțirea "
        "jocului este dezvăluită (jocul s-a terminat, sau ziua împărțirii zilei)",
        "he": "אי אפשר לאמת שידור חוזר בלי הקוד שלו: הקוד מוצג כשהחלוקה של המשחק נחשפת (המשחק "
        "הסתיים, או היום של החלוקה היומית)",
    },
    "the rule does not match the rule letter of the code": {
        "ro": "regula nu se potrivește cu litera regulii din cod",
        "he": "החוק אינו תואם את אות החוק בקוד",
    },
    "choose at most one of code, winnable and daily": {
        "ro": "alegeți cel mult unul dintre code, winnable și daily",
        "he": "בחרו לכל היותר אחד מבין code, winnable ו-daily",  # noqa: RUF001
    },
    "a {action} needs a card": {
        "ro": "o acțiune {action} are nevoie de o carte",
        "he": "פעולת {action} צריכה קלף",
    },
    "an undo takes no card": {
        "ro": "o anulare nu primește nicio carte",
        "he": "ביטול אינו מקבל קלף",
    },
    "a move needs a place 'to' (t1..t7 or f)": {
        "ro": "o mutare are nevoie de un loc 'to' (t1..t7 sau f)",
        "he": "מהלך צריך מקום 'to' (t1..t7 או f)",
    },
    "a {action} takes no 'to'": {
        "ro": "o acțiune {action} nu primește 'to'",
        "he": "פעולת {action} אינה מקבלת 'to'",
    },
    "expected a date before 9999-12-31": {
        "ro": "se aștepta o dată înainte de 9999-12-31",
        "he": "נדרש תאריך לפני 9999-12-31",
    },
    "choose code or daily: the daily board is addressed by its date and rule": {
        "ro": "alegeți code sau daily: clasamentul zilei se alege după data și regula lui",
        "he": "בחרו code או daily: טבלת היום נבחרת לפי התאריך והחוק שלה",
    },
    "expected one of {types}": {"ro": "se aștepta unul dintre {types}", "he": "נדרש אחד מ-{types}"},
    "expected the bearer token as text": {
        "ro": "se aștepta tokenul ca text",
        "he": "נדרש האסימון כטקסט",
    },
    "expected a version number (an integer >= 0)": {
        "ro": "se aștepta un număr de versiune (un întreg >= 0)",
        "he": "נדרש מספר גרסה (מספר שלם >= 0)",
    },
    "expected a notice id (an integer >= 0)": {
        "ro": "se aștepta un id de notificare (un întreg >= 0)",
        "he": "נדרש מזהה הודעה (מספר שלם >= 0)",
    },
    "expected an action object, as the body of POST .../moves": {
        "ro": "se aștepta un obiect de acțiune, ca în corpul lui POST .../moves",
        "he": "נדרש אובייקט פעולה, כמו בגוף של POST .../moves",
    },
    "a token has 1 to {n} characters": {
        "ro": "un token are între 1 și {n} caractere",
        "he": "באסימון יש בין 1 ל-{n} תווים",
    },
    "must be 1 to {n} characters": {
        "ro": "trebuie să aibă între 1 și {n} caractere",
        "he": "חייב להיות בין 1 ל-{n} תווים",
    },
    "must be printable ASCII characters": {
        "ro": "trebuie să fie caractere ASCII tipăribile",
        "he": "חייב להיות תווי ASCII הניתנים להדפסה",
    },
    "The cursor 'after' is not one this board gave out.": {
        "ro": "Cursorul 'after' nu este unul dat de acest clasament.",
        "he": "הסמן 'after' אינו סמן שהטבלה הזו נתנה.",
    },
    "invalid cursor": {"ro": "cursor nevalid", "he": "סמן לא תקף"},
    "date: {message*}": {"ro": "date: {message}", "he": "date: {message}"},
    # ---------------------------------------------------------------- races
    "You already have a seat in this race.": {
        "ro": "Aveți deja un loc în această cursă.",
        "he": "כבר יש לכם מושב במרוץ הזה.",
    },
    "Every seat of this race is taken.": {
        "ro": "Toate locurile acestei curse sunt ocupate.",
        "he": "כל המושבים במרוץ הזה תפוסים.",
    },
    "This race is no longer open: it is {status}.": {
        "ro": "Această cursă nu mai este deschisă: este {status}.",
        "he": "המרוץ הזה כבר אינו פתוח: הוא {status}.",
    },
    "This race has started: abandon your game to quit it.": {
        "ro": "Această cursă a început: abandonați-vă jocul pentru a renunța.",
        "he": "המרוץ הזה התחיל: נטשו את המשחק שלכם כדי לפרוש ממנו.",
    },
    "You have no seat in this race.": {
        "ro": "Nu aveți niciun loc în această cursă.",
        "he": "אין לכם מושב במרוץ הזה.",
    },
    "This race has already started.": {
        "ro": "Această cursă a început deja.",
        "he": "המרוץ הזה כבר התחיל.",
    },
    "A race starts with at least two players.": {
        "ro": "O cursă începe cu cel puțin doi jucători.",
        "he": "מרוץ מתחיל עם שני שחקנים לפחות.",
    },
    "Only the creator of a race may start it.": {
        "ro": "Doar creatorul unei curse o poate porni.",
        "he": "רק יוצר המרוץ יכול להתחיל אותו.",
    },
    "The race has not started yet: wait for the countdown.": {
        "ro": "Cursa nu a început încă: așteptați numărătoarea inversă.",
        "he": "המרוץ עוד לא התחיל: חכו לספירה לאחור.",
    },
    "The race is over: its time limit has passed.": {
        "ro": "Cursa s-a terminat: timpul ei a expirat.",
        "he": "המרוץ הסתיים: הזמן שלו עבר.",
    },
    "There are no hints in a race.": {
        "ro": "Într-o cursă nu există indicii.",
        "he": "אין רמזים במרוץ.",
    },
    "The racers changed while the race's deal was being fixed; try again.": {
        "ro": "Concurenții s-au schimbat cât se stabilea împărțirea cursei; încercați din nou.",
        "he": "המתחרים השתנו בזמן שנקבעה חלוקת הקלפים של המרוץ; נסו שוב.",
    },
    # ---------------------------------------------------------------- limits and the solver
    "Slow down: at most {n} requests a second from one address.": {
        "ro": "Mai încet: cel mult {n} cereri pe secundă de la o adresă.",
        "he": "לאט יותר: לכל היותר {n} בקשות לשנייה מכתובת אחת.",
    },
    "Slow down: at most {n} requests a second.": {
        "ro": "Mai încet: cel mult {n} cereri pe secundă.",
        "he": "לאט יותר: לכל היותר {n} בקשות לשנייה.",
    },
    "Slow down: this answer of {n} actions costs {c} requests, more than is left.": {
        "ro": "Mai încet: acest răspuns de {n} acțiuni costă {c} cereri, mai mult decât a rămas.",
        "he": "לאט יותר: תשובה זו של {n} פעולות עולה {c} בקשות, יותר ממה שנותר.",
    },
    "Slow down: at most {n} sign-ups a minute from one address.": {
        "ro": "Mai încet: cel mult {n} înscrieri pe minut de la o adresă.",
        "he": "לאט יותר: לכל היותר {n} הרשמות לדקה מכתובת אחת.",
    },
    "Slow down: at most {n} sign-ins a minute from one address.": {
        "ro": "Mai încet: cel mult {n} conectări pe minut de la o adresă.",
        "he": "לאט יותר: לכל היותר {n} התחברויות לדקה מכתובת אחת.",
    },
    "At most {n} requests of one address at a time.": {
        "ro": "Cel mult {n} cereri simultane de la o adresă.",
        "he": "לכל היותר {n} בקשות בו-זמנית מכתובת אחת.",
    },
    "One costly request at a time (and at most {n} from one address): wait for the answer to "
    "the previous one.": {
        "ro": "Câte o cerere costisitoare odată (și cel mult {n} de la o adresă): așteptați "
        "răspunsul la cea dinainte.",
        "he": "בקשה יקרה אחת בכל פעם (ולכל היותר {n} מכתובת אחת): חכו לתשובה לקודמת.",
    },
    "The server is busy with other {lane} work; try again shortly.": {
        "ro": "Serverul este ocupat cu alte lucrări ({lane}); încercați din nou în curând.",
        "he": "השרת עסוק בעבודות אחרות ({lane}); נסו שוב בקרוב.",
    },
    "A worker process was lost; try again.": {
        "ro": "Un proces lucrător s-a pierdut; încercați din nou.",
        "he": "תהליך עובד אבד; נסו שוב.",
    },
    "The verdict on this deal is still being searched; ask again shortly.": {
        "ro": "Verdictul despre această împărțire se caută încă; întrebați din nou în curând.",
        "he": "הפסיקה על החלוקה הזו עדיין בחיפוש; שאלו שוב בקרוב.",
    },
    "The replay could not be verified in time; try again.": {
        "ro": "Reluarea nu a putut fi verificată la timp; încercați din nou.",
        "he": "לא ניתן היה לאמת את השידור החוזר בזמן; נסו שוב.",
    },
    "No certified-winnable deal was found in time; try again.": {
        "ro": "Nu s-a găsit la timp o împărțire garantat câștigabilă; încercați din nou.",
        "he": "לא נמצאה בזמן חלוקה שמובטח שניתן לנצח בה; נסו שוב.",
    },
    "The daily deal is still being chosen; try again.": {
        "ro": "Împărțirea zilei se alege încă; încercați din nou.",
        "he": "החלוקה היומית עדיין נבחרת; נסו שוב.",
    },
    "The daily deal of {day} is still being drawn; try again.": {
        "ro": "Împărțirea zilei {day} se trage încă; încercați din nou.",
        "he": "החלוקה היומית של {day} עדיין מוגרלת; נסו שוב.",
    },
    "No certified-winnable daily deal was found for this day.": {
        "ro": "Nu s-a găsit o împărțire a zilei garantat câștigabilă pentru această zi.",
        "he": "לא נמצאה ליום הזה חלוקה יומית שמובטח שניתן לנצח בה.",
    },
    "Refused: {reason*}.": {"ro": "Refuzat: {reason}.", "he": "נדחה: {reason}."},
    "Your game of the daily deal of {day} is still in play: finish it or give it up before "
    "dealing the deal again.": {
        "ro": "Jocul dumneavoastră din împărțirea zilei {day} este încă în desfășurare: "
        "terminați-l sau abandonați-l înainte de a împărți din nou.",
        "he": "המשחק שלכם בחלוקת היום של {day} עדיין פתוח: סיימו אותו או ותרו עליו לפני שתחלקו "
        "אותה שוב.",
    },
    "A game dealt from your current seed is still in play: finish it or give it up before "
    "rotating (its deal would follow from the revealed seed).": {
        "ro": "Un joc împărțit din sămânța dumneavoastră curentă este încă în desfășurare: "
        "terminați-l sau abandonați-l înainte de schimbare (împărțirea lui ar rezulta din "
        "sămânța dezvăluită).",
        "he": "משחק שחולק מהזרע הנוכחי שלכם עדיין פתוח: סיימו אותו או ותרו עליו לפני ההחלפה "
        "(החלוקה שלו הייתה נובעת מהזרע שנחשף).",
    },
    "Your seed was rotated while this game was being dealt; ask again.": {
        "ro": "Sămânța dumneavoastră a fost schimbată în timp ce jocul era împărțit; "
        "cereți din nou.",
        "he": "הזרע שלכם הוחלף בזמן שהמשחק חולק; בקשו שוב.",
    },
    "Invalid client seed: {problem*}.": {
        "ro": "Sămânță de client nevalidă: {problem}.",
        "he": "זרע לקוח לא תקין: {problem}.",
    },
    "a client seed is a string": {
        "ro": "o sămânță de client este un șir de caractere",
        "he": "זרע לקוח הוא מחרוזת",
    },
    "a client seed has 1 to 64 characters": {
        "ro": "o sămânță de client are între 1 și 64 de caractere",
        "he": "לזרע לקוח יש בין 1 ל-64 תווים",
    },
    "a client seed has printable ASCII characters only (space to ~)": {
        "ro": "o sămânță de client are doar caractere ASCII imprimabile (de la spațiu la ~)",
        "he": "לזרע לקוח יש רק תווי ASCII מודפסים (מרווח עד ~)",
    },
    "too many connections from this address (at most {n})": {
        "ro": "prea multe conexiuni de la această adresă (cel mult {n})",
        "he": "יותר מדי חיבורים מהכתובת הזו (לכל היותר {n})",
    },
    "too many connections of this player (at most {n})": {
        "ro": "prea multe conexiuni ale acestui jucător (cel mult {n})",
        "he": "יותר מדי חיבורים של השחקן הזה (לכל היותר {n})",
    },
    # ---------------------------------------------------------------- query parameters, streams
    "expected true or false (exactly, in lower case)": {
        "ro": "se aștepta true sau false (exact așa, cu litere mici)",
        "he": "נדרש true או false (בדיוק כך, באותיות קטנות)",
    },
    "expected an RFC 3339 date-time such as 2026-01-02T03:04:05Z or 2026-01-02T05:04:05+02:00 "
    "(the offset may be left out for UTC){rest*}": {
        "ro": "se aștepta o dată și o oră RFC 3339, de exemplu 2026-01-02T03:04:05Z sau "
        "2026-01-02T05:04:05+02:00 (decalajul poate lipsi pentru UTC){rest}",
        "he": "נדרשים תאריך ושעה לפי RFC 3339, למשל 2026-01-02T03:04:05Z או "
        "2026-01-02T05:04:05+02:00 (אפשר להשמיט את ההיסט עבור UTC){rest}",
    },
    "expected an RFC 3339 date-time such as 2026-01-02T03:04:05Z or 2026-01-02T05:04:05+02:00 "
    "(the offset may be left out for UTC)": {
        "ro": "se aștepta o dată și o oră RFC 3339, de exemplu 2026-01-02T03:04:05Z sau "
        "2026-01-02T05:04:05+02:00 (decalajul poate lipsi pentru UTC)",
        "he": "נדרשים תאריך ושעה לפי RFC 3339, למשל 2026-01-02T03:04:05Z או "
        "2026-01-02T05:04:05+02:00 (אפשר להשמיט את ההיסט עבור UTC)",
    },
    "; send the + of an offset as %2B": {
        "ro": "; trimiteți + al unui decalaj ca %2B",
        "he": "; שלחו את ה-+ של היסט כ-%2B",
    },
    ": an offset is at most 23:59": {
        "ro": ": un decalaj este cel mult 23:59",
        "he": ": היסט הוא לכל היותר 23:59",
    },
    ": no such date or time": {
        "ro": ": nu există o asemenea dată sau oră",
        "he": ": אין תאריך או שעה כאלה",
    },
    ": an instant from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999Z in UTC": {
        "ro": ": un moment de la 0001-01-01T00:00:00Z până la 9999-12-31T23:59:59.999999Z în UTC",
        "he": ": רגע שבין 0001-01-01T00:00:00Z ל-9999-12-31T23:59:59.999999Z לפי UTC",
    },
    "expected the id of an event of this stream (an integer)": {
        "ro": "se aștepta id-ul unui eveniment al acestui flux (un număr întreg)",
        "he": "נדרש המזהה של אירוע בזרם הזה (מספר שלם)",
    },
    # ---------------------------------------------------------------- notation (the engine)
    "invalid {kind*} {text}: {reason*}": {
        "ro": "{kind} nevalid(ă) {text}: {reason}",
        "he": "{kind} לא תקין {text}: {reason}",
    },
    "card": {"ro": "carte", "he": "קלף"},
    "place": {"ro": "loc", "he": "מקום"},
    "move": {"ro": "mutare", "he": "מהלך"},
    "deal code": {"ro": "cod de împărțire", "he": "קוד חלוקה"},
    "seed": {"ro": "sămânță", "he": "זרע"},
    "a card is text such as 'TH' or '7S'": {
        "ro": "o carte este un text precum 'TH' sau '7S'",
        "he": "קלף הוא טקסט כמו 'TH' או '7S'",
    },
    "expected a rank (A 2-9 T J Q K, or 10) and a suit (S H D C)": {
        "ro": "se aștepta un rang (A 2-9 T J Q K, sau 10) și o culoare (S H D C)",
        "he": "נדרשים דרגה (A 2-9 T J Q K, או 10) וצורה (S H D C)",
    },
    "expected t1 to t7 or f": {"ro": "se aștepta t1 până la t7 sau f", "he": "נדרש t1 עד t7 או f"},
    "expected <card>-<place>, such as 7H-t5": {
        "ro": "se aștepta <carte>-<loc>, de exemplu 7H-t5",
        "he": "נדרש <קלף>-<מקום>, למשל 7H-t5",
    },
    "a move is text such as '7H-t5', 'AS-f' or 'undo'": {
        "ro": "o mutare este un text precum '7H-t5', 'AS-f' sau 'undo'",
        "he": "מהלך הוא טקסט כמו '7H-t5', 'AS-f' או 'undo'",
    },
    "expected <card>-<place> (such as 7H-t5) or undo": {
        "ro": "se aștepta <carte>-<loc> (de exemplu 7H-t5) sau undo",
        "he": "נדרש <קלף>-<מקום> (למשל 7H-t5) או undo",
    },
    "move text is ASCII, such as '7H-t5'": {
        "ro": "textul unei mutări este ASCII, de exemplu '7H-t5'",
        "he": "טקסט של מהלך הוא ASCII, למשל '7H-t5'",
    },
    "expected {forms}": {"ro": "se aștepta {forms}", "he": "נדרש {forms}"},
    "expected {first}, or {second}": {
        "ro": "se aștepta {first} sau {second}",
        "he": "נדרש {first} או {second}",
    },
    "{reason*}: expected {form}": {
        "ro": "{reason}: se aștepta {form}",
        "he": "{reason}: נדרש {form}",
    },
    "an RU2 seed is four groups of 7 letters A-Z joined by dashes": {
        "ro": "o sămânță RU2 are patru grupuri de câte 7 litere A-Z unite prin cratime",
        "he": "זרע RU2 הוא ארבע קבוצות של 7 אותיות A-Z המחוברות במקפים",
    },
    "the seed's four groups of 7 letters must be joined by dashes": {
        "ro": "cele patru grupuri de câte 7 litere ale seminței trebuie unite prin cratime",
        "he": "ארבע הקבוצות של 7 אותיות בזרע חייבות להיות מחוברות במקפים",
    },
    "the parts of an RU2 code are joined by dashes (other separators and codes without their "
    "dashes are refused)": {
        "ro": "părțile unui cod RU2 sunt unite prin cratime (alți separatori și codurile fără "
        "cratime sunt refuzate)",
        "he": "החלקים של קוד RU2 מחוברים במקפים (מפרידים אחרים וקודים בלי מקפים נדחים)",
    },
    "group {index} of the seed is {what}: each group is exactly 7 letters A-Z; expected {form}": {
        "ro": "grupul {index} al seminței este {what}: fiecare grup are exact 7 litere A-Z; "
        "se aștepta {form}",
        "he": "הקבוצה {index} של הזרע היא {what}: כל קבוצה היא בדיוק 7 אותיות A-Z; נדרש {form}",
    },
    "the seed is too large: an RU2 seed must be below 2**128 (the largest is {largest})": {
        "ro": "sămânța este prea mare: o sămânță RU2 trebuie să fie sub 2**128 (cea mai mare este "
        "{largest})",
        "he": "הזרע גדול מדי: זרע RU2 חייב להיות קטן מ-2**128 (הגדול ביותר הוא {largest})",
    },
    "a deal code is ASCII text: RU1-<C|R>-<7 letters A-Z> or RU2-<C|R>-<four groups of 7 "
    "letters A-Z>": {
        "ro": "un cod de împărțire este text ASCII: RU1-<C|R>-<7 litere A-Z> sau "
        "RU2-<C|R>-<patru grupuri de câte 7 litere A-Z>",
        "he": "קוד חלוקה הוא טקסט ASCII: RU1-<C|R>-<7 אותיות A-Z> או "
        "RU2-<C|R>-<ארבע קבוצות של 7 אותיות A-Z>",
    },
    "the seed must be exactly 7 letters A-Z": {
        "ro": "sămânța trebuie să aibă exact 7 litere A-Z",
        "he": "הזרע חייב להיות בדיוק 7 אותיות A-Z",
    },
    "the rule letter must be C (classic) or R (relaxed)": {
        "ro": "litera regulii trebuie să fie C (clasic) sau R (relaxat)",
        "he": "אות החוק חייבת להיות C (קלסי) או R (מקל)",
    },
    "a deal code is text such as RU1-C-AAAAABB or {form}": {
        "ro": "un cod de împărțire este un text precum RU1-C-AAAAABB sau {form}",
        "he": "קוד חלוקה הוא טקסט כמו RU1-C-AAAAABB או {form}",
    },
    "unknown deal code version {version}: the versions are RU1 and RU2": {
        "ro": "versiune necunoscută de cod {version}: versiunile sunt RU1 și RU2",
        "he": "גרסת קוד לא מוכרת {version}: הגרסאות הן RU1 ו-RU2",  # noqa: RUF001
    },
    # ---------------------------------------------------------------- pydantic's messages
    "Field required": {"ro": "Câmp obligatoriu", "he": "שדה חובה"},
    "Extra inputs are not permitted": {
        "ro": "Câmpurile în plus nu sunt permise",
        "he": "שדות נוספים אינם מותרים",
    },
    "Input should be a valid string": {
        "ro": "Valoarea trebuie să fie un text",
        "he": "הערך חייב להיות מחרוזת",
    },
    "Input should be a valid integer": {
        "ro": "Valoarea trebuie să fie un număr întreg",
        "he": "הערך חייב להיות מספר שלם",
    },
    "Input should be a valid integer, unable to parse string as an integer": {
        "ro": "Valoarea trebuie să fie un număr întreg (textul nu este un întreg)",
        "he": "הערך חייב להיות מספר שלם (המחרוזת אינה מספר שלם)",
    },
    "Input should be a valid integer, got a number with a fractional part": {
        "ro": "Valoarea trebuie să fie un număr întreg, nu cu zecimale",
        "he": "הערך חייב להיות מספר שלם, בלי חלק עשרוני",
    },
    "Input should be a valid boolean": {
        "ro": "Valoarea trebuie să fie true sau false",
        "he": "הערך חייב להיות true או false",
    },
    "Input should be a valid boolean, unable to interpret input": {
        "ro": "Valoarea trebuie să fie true sau false",
        "he": "הערך חייב להיות true או false",
    },
    "Input should be a valid dictionary": {
        "ro": "Valoarea trebuie să fie un obiect",
        "he": "הערך חייב להיות אובייקט",
    },
    "Input should be a valid list": {
        "ro": "Valoarea trebuie să fie o listă",
        "he": "הערך חייב להיות רשימה",
    },
    "Input should be a valid number": {
        "ro": "Valoarea trebuie să fie un număr",
        "he": "הערך חייב להיות מספר",
    },
    "Input should be a valid dictionary or instance of {model}": {
        "ro": "Valoarea trebuie să fie un obiect ({model})",
        "he": "הערך חייב להיות אובייקט ({model})",
    },
    "Input should be {options} or {last}": {
        "ro": "Valoarea trebuie să fie {options} sau {last}",
        "he": "הערך חייב להיות {options} או {last}",
    },
    "Input should be {expected}": {
        "ro": "Valoarea trebuie să fie {expected}",
        "he": "הערך חייב להיות {expected}",
    },
    "Input should be greater than or equal to {n}": {
        "ro": "Valoarea trebuie să fie cel puțin {n}",
        "he": "הערך חייב להיות לפחות {n}",
    },
    "Input should be less than or equal to {n}": {
        "ro": "Valoarea trebuie să fie cel mult {n}",
        "he": "הערך חייב להיות לכל היותר {n}",
    },
    "Input should be greater than {n}": {
        "ro": "Valoarea trebuie să fie mai mare decât {n}",
        "he": "הערך חייב להיות גדול מ-{n}",
    },
    "Input should be less than {n}": {
        "ro": "Valoarea trebuie să fie mai mică decât {n}",
        "he": "הערך חייב להיות קטן מ-{n}",
    },
    "String should have at least {n} character": {
        "ro": "Textul trebuie să aibă cel puțin {n} caracter",
        "he": "במחרוזת חייב להיות לפחות {n} תו",
    },
    "String should have at least {n} characters": {
        "ro": "Textul trebuie să aibă cel puțin {n} caractere",
        "he": "במחרוזת חייבים להיות לפחות {n} תווים",
    },
    "String should have at most {n} characters": {
        "ro": "Textul trebuie să aibă cel mult {n} caractere",
        "he": "במחרוזת יכולים להיות לכל היותר {n} תווים",
    },
    "String should have at most {n} character": {
        "ro": "Textul trebuie să aibă cel mult {n} caracter",
        "he": "במחרוזת יכול להיות לכל היותר {n} תו",
    },
    "List should have at most {n} items after validation, not {m}": {
        "ro": "Lista trebuie să aibă cel mult {n} elemente, nu {m}",
        "he": "ברשימה יכולים להיות לכל היותר {n} פריטים, לא {m}",
    },
    "List should have at least {n} items after validation, not {m}": {
        "ro": "Lista trebuie să aibă cel puțin {n} elemente, nu {m}",
        "he": "ברשימה חייבים להיות לפחות {n} פריטים, לא {m}",
    },
    "String should match pattern {pattern}": {
        "ro": "Textul trebuie să respecte modelul {pattern}",
        "he": "המחרוזת חייבת להתאים לתבנית {pattern}",
    },
    "Input should be a valid UUID, {reason}": {
        "ro": "Valoarea trebuie să fie un UUID valid ({reason})",
        "he": "הערך חייב להיות UUID תקין ({reason})",
    },
    "Input should be a valid date in the format YYYY-MM-DD, {reason}": {
        "ro": "Valoarea trebuie să fie o dată AAAA-LL-ZZ (YYYY-MM-DD) ({reason})",
        "he": "הערך חייב להיות תאריך בתבנית YYYY-MM-DD ({reason})",
    },
    "Input should be a valid datetime, {reason}": {
        "ro": "Valoarea trebuie să fie o dată și o oră valide ({reason})",
        "he": "הערך חייב להיות תאריך ושעה תקינים ({reason})",
    },
    "Input should be a valid datetime or date, {reason}": {
        "ro": "Valoarea trebuie să fie o dată (și o oră) validă ({reason})",
        "he": "הערך חייב להיות תאריך (ושעה) תקין ({reason})",
    },
}


@dataclass(frozen=True, slots=True)
class Template:
    english: str
    strict: re.Pattern[str]
    """Matches when each `{name*}` part but the last is one of the catalogue's fixed texts."""
    loose: re.Pattern[str]
    """Matches whatever the parts are."""
    phrases: frozenset[str]
    """The placeholders whose parts are texts of the catalogue themselves."""
    texts: dict[str, str]


def _template(english: str, texts: dict[str, str], known: str) -> Template:
    strict: list[str] = []
    loose: list[str] = []
    phrases: set[str] = set()
    position = 0
    matches = list(PLACEHOLDER.finditer(english))
    for match in matches:
        literal = re.escape(english[position : match.start()])
        strict.append(literal)
        loose.append(literal)
        name = match[1]
        loose.append(f"(?P<{name}>.+?)")
        if match[2]:
            phrases.add(name)
        if match[2] and match is not matches[-1]:
            # The last part may be a template's text itself: it takes whatever is left.
            strict.append(f"(?P<{name}>{known})")
        else:
            strict.append(f"(?P<{name}>.+?)")
        position = match.end()
    strict.append(re.escape(english[position:]))
    loose.append(re.escape(english[position:]))
    return Template(
        english,
        re.compile("".join(strict), re.DOTALL),
        re.compile("".join(loose), re.DOTALL),
        frozenset(phrases),
        texts,
    )


@cache
def _templates() -> tuple[dict[str, Template], list[Template]]:
    """(the fixed texts by their English, the templates: the most literal text first)."""
    fixed_texts = sorted((e for e in CATALOGUE if not PLACEHOLDER.search(e)), key=len, reverse=True)
    known = "|".join(re.escape(text) for text in fixed_texts)
    fixed: dict[str, Template] = {}
    varying: list[Template] = []
    for english, texts in CATALOGUE.items():
        template = _template(english, texts, known)
        if PLACEHOLDER.search(english):
            varying.append(template)
        else:
            fixed[english] = template
    varying.sort(key=lambda t: -len(PLACEHOLDER.sub("", t.english)))
    return fixed, varying


def translate(english: str, lang: str) -> str | None:
    """`english` in `lang`, or None when the catalogue does not know it (English: itself)."""
    if lang == "en":
        return english
    fixed, varying = _templates()
    found = fixed.get(english)
    if found is not None:
        return found.texts.get(lang)
    # First with the phrases among the known texts (`invalid deal code ...`: the kind is "deal
    # code", not "deal"), then with any parts.
    tries = [(t, t.strict) for t in varying] + [(t, t.loose) for t in varying if t.phrases]
    for template, pattern in tries:
        match = pattern.fullmatch(english)
        if match is None or lang not in template.texts:
            continue
        values = {
            name: (translate(value, lang) or value) if name in template.phrases else value
            for name, value in match.groupdict().items()
        }
        return _filled(template.texts[lang], values)
    return None


def _filled(text: str, values: dict[str, str]) -> str:
    return PLACEHOLDER.sub(lambda match: values[match[1]], text)


def localize(body: dict[str, Any], lang: str, *, detail_done: bool = False) -> dict[str, Any]:
    """The problem document `body` (worded in English) in `lang`: its title, its detail (unless
    `detail_done`: it is in `lang` already) and its errors' messages; `rule_url` beside a
    `rule` that the rules page defines."""
    out = dict(body)
    slug = str(body.get("type", "")).removeprefix("/problems/")
    out["title"] = problem_title(slug, lang) or body["title"]
    errors = body.get("errors")
    if isinstance(errors, list) and lang != "en":
        translated = [
            {**error, "message": translate(str(error.get("message", "")), lang) or error["message"]}
            if isinstance(error, dict) and "message" in error
            else error
            for error in errors
        ]
        joined = "; ".join(f"{e['field']}: {e['message']}" for e in errors if isinstance(e, dict))
        if not detail_done and body.get("detail") == joined:
            out["detail"] = "; ".join(
                f"{e['field']}: {e['message']}" for e in translated if isinstance(e, dict)
            )
            detail_done = True
        out["errors"] = translated
    if not detail_done and isinstance(body.get("detail"), str):
        out["detail"] = translate(body["detail"], lang) or body["detail"]
    rule = body.get("rule")
    if isinstance(rule, str) and "rule_url" not in body:
        url = rule_url(rule)
        if url is not None:
            out["rule_url"] = url
    return out
