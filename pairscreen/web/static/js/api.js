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
// own plain-text sentence. A 401 on the stored key signs the person out.
export async function api(path, { method = "GET", key = null } = {}) {
  const used = key ?? storedKey();
  let response;
  try {
    response = await fetch(BASE + path, {
      method,
      headers: { Authorization: `Bearer ${used}` },
      cache: "no-store",
    });
  } catch {
    throw new ApiError(0, "The server did not answer. Is pairscreen still running?");
  }
  if (response.status === 204) return null;
  if (!response.ok) {
    const text = (await response.text()).trim() || `The server answered ${response.status}.`;
    if (response.status === 401 && key === null) {
      window.dispatchEvent(new CustomEvent("pairscreen:unauthorized", { detail: text }));
    }
    throw new ApiError(response.status, text);
  }
  return response.json();
}

export const pairPath = (a, b) => `${encodeURIComponent(a)}/${encodeURIComponent(b)}`;
