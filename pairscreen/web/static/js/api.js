// The one way the site talks to the server: the JSON API, with the signed-in key.
// The key lives in sessionStorage only (this tab, until it closes or the person signs out).

const STORE = "pairscreen.key";
export const BASE = "/api/v1";

export const storedKey = () => sessionStorage.getItem(STORE);
export const keepKey = (key) => sessionStorage.setItem(STORE, key);
export const forgetKey = () => sessionStorage.removeItem(STORE);

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// `path` under /api/v1; resolves to the JSON body (null for 204), rejects with the API's
// own plain-text sentence. A 401 on the stored key signs the person out. `body` goes as
// JSON (a webhook URL travels there, never in the URL).
export async function api(path, { method = "GET", key = null, body = null } = {}) {
  const response = await send(path, method, key, null, body);
  return response.status === 204 ? null : response.json();
}

// `path` revalidated against the ETag the page holds (`etag`, null for none): resolves to null
// when the server answers 304 (nothing changed, nothing sent), else to { etag, body }.
export async function apiIfChanged(path, etag) {
  const response = await send(path, "GET", null, null, null, etag);
  if (response.status === 304) return null;
  return { etag: response.headers.get("ETag"), body: await response.json() };
}

// `path` under /api/v1 asked for as `accept` (e.g. "text/csv"); resolves to the body's text.
export async function apiText(path, accept) {
  return (await send(path, "GET", null, accept)).text();
}

// The request with the key in the Authorization header (never in the URL); a refusal
// becomes an ApiError carrying the API's sentence.
async function send(path, method, key, accept, body = null, etag = null) {
  const headers = { Authorization: `Bearer ${key ?? storedKey()}` };
  if (accept) headers.Accept = accept;
  if (etag) headers["If-None-Match"] = etag;
  if (body !== null) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(BASE + path, {
      method,
      headers,
      cache: "no-store",
      ...(body !== null ? { body: JSON.stringify(body) } : {}),
    });
  } catch {
    throw new ApiError(0, "The server did not answer. Is pairscreen still running?");
  }
  if (!response.ok && !(etag && response.status === 304)) {
    const text = (await response.text()).trim() || `The server answered ${response.status}.`;
    if (response.status === 401 && key === null) {
      window.dispatchEvent(new CustomEvent("pairscreen:unauthorized", { detail: text }));
    }
    throw new ApiError(response.status, text);
  }
  return response;
}

export const pairPath = (a, b) => `${encodeURIComponent(a)}/${encodeURIComponent(b)}`;
