// The consent page of an app (/oauth/authorize, served by server/api/oauth.py). When this
// browser holds the web client's session (localStorage "solitaire.player", as lib/session.js
// keeps it), the page offers to continue as that player: its token goes with the form only when
// that choice is made. Without a stored session, or without scripts, the page asks for a name
// and a password. The words are the server's (in the page's language); this only fills the name.
const STORE = "solitaire.player";

function storedPlayer() {
  try {
    const stored = JSON.parse(localStorage.getItem(STORE) || "null");
    if (stored && typeof stored.token === "string" && stored.token
      && typeof stored.name === "string") return stored;
  } catch {
    // storage is off or holds something else: no stored player
  }
  return null;
}

function offer(form, me) {
  const who = document.getElementById("oauth-who");
  const signIn = document.getElementById("oauth-sign-in");
  const token = document.getElementById("oauth-token");
  const current = document.getElementById("oauth-who-current");
  const other = document.getElementById("oauth-who-password");
  document.getElementById("oauth-current-name").textContent = me.name;
  const choose = () => {
    const stored = current.checked;
    token.value = stored ? me.token : "";
    signIn.hidden = stored;
    signIn.disabled = stored;
  };
  (form.dataset.who === "password" ? other : current).checked = true;
  who.disabled = false;
  who.hidden = false;
  current.addEventListener("change", choose);
  other.addEventListener("change", () => {
    choose();
    document.getElementById("oauth-name").focus();
  });
  choose();
}

const form = document.getElementById("consent-form");
if (form && form.dataset.who !== "refused") {
  const me = storedPlayer();
  if (me) offer(form, me);
}
