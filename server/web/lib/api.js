// The public HTTP API (`/api/v1`), nothing else. Every error is the server's RFC 9457 problem
// document, thrown as an ApiError. A 401 to a call that carried the token (the session ended:
// signed out or revoked elsewhere, or the account deleted) is told to `unauthorized(token)`
// (lib/session.js) before it is thrown; a refused sign-in (invalid-credentials) is not.

let token = null;
let language = "en";
let unauthorized = () => {};

export function configure(options) {
  if ("token" in options) token = options.token;
  if ("language" in options) language = options.language;
  if ("unauthorized" in options) unauthorized = options.unauthorized;
}

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
  }
}

export function newKey() {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// One call. `key` (an Idempotency-Key) makes a retried action safe: a call that carries one is
// retried after a network failure or a 429, and the server applies it at most once. A read, or
// a call marked `retry` (one that changes nothing, such as verifying a replay), is retried
// after a 429, or a 503 that says when to come back (the server's workers were busy).
// `raw` answers the Response itself (a file to download) instead of its JSON.
export async function api(method, path, body, { key = null, retry = false, raw = false } = {}) {
  const headers = { Accept: "application/json", "Accept-Language": language };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const sent = token;
  if (sent) headers.Authorization = `Bearer ${sent}`;
  if (key) headers["Idempotency-Key"] = key;
  const init = { method, headers, body: body === undefined ? undefined : JSON.stringify(body) };
  for (let attempt = 0; ; attempt += 1) {
    let response;
    try {
      response = await fetch(`/api/v1${path}`, init);
    } catch (error) {
      if (key && attempt < 3) {
        await sleep(300 * (attempt + 1));
        continue;
      }
      throw new ApiError(0, { title: "Network error", detail: String(error.message || error) });
    }
    const busy = response.status === 429
      || (response.status === 503 && response.headers.has("Retry-After"));
    if (busy && attempt < 3 && (key || retry || method === "GET")) {
      const wait = Number(response.headers.get("Retry-After")) || 1;
      await sleep(Math.min(wait, 5) * 1000);
      continue;
    }
    if (raw && response.ok) return response;
    const type = response.headers.get("Content-Type") || "";
    const data = type.includes("json") ? await response.json() : null;
    if (!response.ok) {
      const problem = data || { title: response.statusText, detail: "" };
      if (response.status === 401 && sent
        && !String(problem.type || "").endsWith("/invalid-credentials")) {
        unauthorized(sent);
      }
      throw new ApiError(response.status, problem);
    }
    return data;
  }
}

export const get = (path) => api("GET", path);
export const post = (path, body = {}, options = {}) => api("POST", path, body, options);
export const patch = (path, body) => api("PATCH", path, body);
export const put = (path, body) => api("PUT", path, body);
export const del = (path, body) => api("DELETE", path, body);

// A file the API answers (an export): its contents and the name the server gives it
// (Content-Disposition), else `fallback`.
export async function download(path, fallback) {
  const response = await api("GET", path, undefined, { raw: true });
  const disposition = response.headers.get("Content-Disposition") || "";
  const named = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(disposition);
  const filename = named ? decodeURIComponent(named[1]) : fallback;
  return { blob: await response.blob(), filename };
}

// A query string from an object, leaving out empty values.
export function query(params) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== null && value !== undefined && value !== "") search.set(name, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}
