// The shell: sign-in, the navigation and the router (#/page/...).

import { api, ApiError, forgetKey, keepKey, storedKey } from "./api.js";
import { esc } from "./format.js";
import { renderScreen } from "./screen.js";
import { renderPair } from "./pair.js";
import { renderWatchlist } from "./watchlist.js";
import { renderPegs } from "./pegs.js";
import { renderAssets } from "./assets.js";
import { renderAccount } from "./account.js";
import { renderMap } from "./map.js";

const PAGES = {
  screen: renderScreen,
  map: renderMap,
  pair: renderPair,
  watchlist: renderWatchlist,
  pegs: renderPegs,
  assets: renderAssets,
  account: renderAccount,
};

const main = document.getElementById("main");
const SIGNED_OUT = "Signed out.";
let signOutReason = "";

function route() {
  const hash = location.hash.startsWith("#/") ? location.hash.slice(2) : "screen";
  const [path, query = ""] = hash.split("?");
  const [page, ...args] = path.split("/").map(decodeURIComponent);
  return { page: PAGES[page] ? page : "screen", args, query: new URLSearchParams(query) };
}

async function show(event) {
  if (location.hash && !location.hash.startsWith("#/")) return; // the skip link
  const signedIn = Boolean(storedKey());
  document.getElementById("nav").hidden = !signedIn;
  document.getElementById("who").hidden = !signedIn;
  if (!signedIn) {
    banner.hidden = true;
    signInForm();
    return;
  }
  const { page, args, query } = route();
  for (const link of document.querySelectorAll("#nav a")) {
    const current = link.getAttribute("href") === `#/${page}`;
    if (current) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  main.innerHTML = `<p class="loading">Loading…</p>`;
  staleBanner();
  try {
    await PAGES[page](main, args, query);
  } catch (error) {
    if (!storedKey()) return; // a 401 signed the person out: the sign-in form is showing
    main.innerHTML = `<h1>Something went wrong</h1><p class="error" role="alert">${esc(
      error instanceof ApiError ? error.message : String(error),
    )}</p>`;
  }
  const heading = main.querySelector("h1");
  if (heading) {
    heading.tabIndex = -1;
    document.title = `${heading.textContent} · pairscreen`;
    if (event?.type === "hashchange") heading.focus(); // a keyboard user lands on the page
  }
}

// Every page says when the data behind it is stale: the latest screen as judged now (one
// survivor asked for, so the check is small whatever the screen's size).
const banner = document.getElementById("stale-banner");

async function staleBanner() {
  try {
    const screen = await api("/screen/latest?limit=1");
    banner.textContent = screen.stale ? screen.stale_reason : "";
    banner.hidden = !screen.stale;
  } catch {
    banner.hidden = true; // no screen yet, or the server is away: the page says so itself
  }
}

function signInForm() {
  document.title = "Sign in · pairscreen";
  main.innerHTML = `
    <h1>Sign in</h1>
    <p>Paste your API key (it starts with <code>rr_</code>). It is checked with the API and
    kept in this browser tab only, until you sign out or close the tab.</p>
    <form id="sign-in" class="sign-in">
      <label for="key">API key</label>
      <input id="key" name="key" type="password" spellcheck="false"
             required placeholder="rr_…">
      <button type="submit">Sign in</button>
    </form>
    <p id="sign-in-error" class="${signOutReason === SIGNED_OUT ? "notice" : "error"}"
       role="alert">${esc(signOutReason)}</p>
    <p class="hint"><code>pairscreen demo</code> prints two keys (Personal and Pro);
    <code>pairscreen keys rotate EMAIL</code> issues one.</p>`;
  const form = document.getElementById("sign-in");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const key = form.key.value.trim();
    const error = document.getElementById("sign-in-error");
    error.className = "notice";
    error.textContent = "Checking…";
    try {
      const me = await api("/me", { key });
      keepKey(key);
      signOutReason = "";
      setWho(me);
      if (!location.hash.startsWith("#/")) location.hash = "#/screen";
      else show();
    } catch (e) {
      error.className = "error";
      error.textContent = e.message;
    }
  });
}

function setWho(me) {
  document.getElementById("who-email").textContent = `${me.email} · ${me.tier}`;
}

function signOut(reason = "") {
  forgetKey();
  signOutReason = reason;
  show();
}

document.getElementById("sign-out").addEventListener("click", () => signOut(SIGNED_OUT));
document.getElementById("skip").addEventListener("click", (event) => {
  event.preventDefault();
  main.focus();
});
window.addEventListener("pairscreen:unauthorized", (event) => signOut(event.detail));
window.addEventListener("hashchange", show);

if (storedKey()) {
  api("/me").then(setWho, () => {});
}
show();
