// The WebSocket of the public API (`/api/v1/live`, subprotocol solitaire.v1), kept open: when the
// connection drops it connects again after a growing pause (1 s, 2 s, 4 s … at most 10 s), and
// `hello` sends again what the page watches. The pause starts afresh once the server confirms a
// watch (`watching()`). Nothing is reconnected once `finished()` says that nothing more will
// happen, nor once the page has closed it (`close()`) or left (`active()` is false).
//
// The page that uses it says what each turn means to its reader through `state(name, seconds)`:
// "connecting" (the first time), "reconnecting" (with `seconds` null while connecting again, or
// the pause before the next try), "ended" (the connection closed and nothing more will come).
//
// A connection signed in (`auth`) that the server closes with 4401 ("session ended": signed
// out, revoked elsewhere, the account deleted) ends this browser's session (lib/session.js):
// its token is forgotten and the welcome window asks again.
import { sessionEnded } from "./session.js";

const PROTOCOL = "solitaire.v1";
const SESSION_ENDED = 4401;
const MAX_BACKOFF_MS = 10000;

export class LiveSocket {
  // hello(): sends, on each new connection, what the page watches (with send()).
  // message(message): each message from the server, parsed.
  // state(name, seconds): see above.
  // finished(): nothing more will happen to what the page watches.
  // active(): the page still has the view that opened the socket.
  // unsupported(): this browser cannot open a WebSocket.
  constructor({
    hello, message, state, finished = () => false, active = () => true, unsupported = () => {},
  }) {
    this.options = { hello, message, state, finished, active, unsupported };
    this.socket = null;
    this.attempt = 0;
    this.retryTimer = null;
    this.stopped = false; // closed by the page: never reconnect
  }

  // Whether a connection is open or opening.
  get connected() {
    return this.socket !== null;
  }

  get live() {
    return !this.stopped && this.options.active();
  }

  // Connects (again).
  start() {
    this.retryTimer = null;
    const { hello, message, state, finished, unsupported } = this.options;
    if (!this.live || finished()) return;
    if (typeof WebSocket === "undefined") {
      unsupported();
      return;
    }
    const url = `${location.protocol === "https:" ? "wss://" : "ws://"}${location.host}/api/v1/live`;
    let ws;
    try {
      ws = new WebSocket(url, [PROTOCOL]);
    } catch {
      unsupported();
      return;
    }
    this.socket = ws;
    if (this.attempt) state("reconnecting", null);
    else state("connecting", null);
    ws.addEventListener("open", () => {
      if (ws === this.socket) hello();
    });
    ws.addEventListener("message", (event) => {
      if (ws !== this.socket) return;
      let parsed;
      try {
        parsed = JSON.parse(event.data);
      } catch {
        return;
      }
      message(parsed);
    });
    ws.addEventListener("close", (event) => {
      if (event.code === SESSION_ENDED && ws.signedInWith) sessionEnded(ws.signedInWith);
      if (ws !== this.socket || !this.live) return;
      this.socket = null;
      if (finished()) {
        state("ended", null);
        return; // nothing more will happen
      }
      const wait = Math.min(1000 * 2 ** this.attempt, MAX_BACKOFF_MS);
      this.attempt += 1;
      state("reconnecting", Math.round(wait / 1000));
      this.retryTimer = setTimeout(() => this.start(), wait);
    });
  }

  send(message) {
    const ws = this.socket;
    if (ws && ws.readyState === WebSocket.OPEN) {
      if (message.type === "auth") ws.signedInWith = message.token; // whose session it is
      ws.send(JSON.stringify(message));
    }
  }

  // The server confirmed a watch: the next drop starts the pause afresh.
  watching() {
    this.attempt = 0;
  }

  // Closes the connection for good (a connection still opening is closed once it is open).
  close() {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const ws = this.socket;
    if (!ws) return;
    this.socket = null;
    if (ws.readyState === WebSocket.CONNECTING) ws.addEventListener("open", () => ws.close(1000));
    else ws.close(1000);
  }
}
