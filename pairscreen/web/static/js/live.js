// Live pages: a check run every minute while its page is shown, and never after. The page's
// own element is the anchor: once the router replaced it, the chain of timers stops, so no
// page leaves a poller behind. Tests shorten the minute with `window.pairscreenRefreshMs`.

import { apiIfChanged } from "./api.js";

const MINUTE = 60000;

export function refreshMs() {
  const chosen = Number(window.pairscreenRefreshMs);
  return Number.isFinite(chosen) && chosen > 0 ? chosen : MINUTE;
}

// Run `check` every `refreshMs()` while `anchor` is in the document; skipped while the tab is
// hidden (nobody reads it), one at a time (a slow answer never overlaps the next).
export function keepChecking(anchor, check) {
  const tick = async () => {
    if (!anchor.isConnected) return;
    if (!document.hidden) {
      try {
        await check();
      } catch {
        // the server away for a minute: the next tick tries again; a 401 signed out already
      }
    }
    if (anchor.isConnected) setTimeout(tick, refreshMs());
  };
  setTimeout(tick, refreshMs());
}

// Every `refreshMs()` while `anchor` is shown, `path` revalidated with the ETag of what the
// page shows (a 304 costs nothing); each changed answer goes to `onChanged(body, answer)`.
export function keepRevalidating(anchor, path, etag, onChanged) {
  let held = etag;
  keepChecking(anchor, async () => {
    const answer = await apiIfChanged(path, held);
    if (answer === null) return;
    held = answer.etag;
    await onChanged(answer.body, answer);
  });
}
