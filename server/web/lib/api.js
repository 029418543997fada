// The public HTTP API (`/api/v1`), nothing else. Every error is the server's RFC 9457 problem
// document, thrown as an ApiError.

let token = null;
let language = "en";

export function configure(options) {
  if ("token" in options) token = options.token;
  if ("language" in options) language = options.language;
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
export async function api(method, path, body, { key = null, retry = false } = {}) {
  const headers = { Accept: "application/json", "Accept-Language": language };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (token) headers.Authorization = `Bearer ${token}`;
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
    const type = response.headers.get("Content-Type") || "";
    const data = type.includes("json") ? await response.json() : null;
    if (!response.ok) {
      throw new ApiError(response.status, data || { title: response.statusText, detail: "" });
    }
    return data;
  }
}

export const get = (path) => api("GET", path);
export const post = (path, body = {}, options = {}) => api("POST", path, body, options);
export const patch = (path, body) => api("PATCH", path, body);

// A query string from an object, leaving out empty values.
export function query(params) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== null && value !== undefined && value !== "") search.set(name, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}
