// Watchlist: the items, their notification state and switches, remove.

import { api, pairPath } from "./api.js";
import { esc, tableWrap, utc } from "./format.js";

const STATES = {
  none: "Mid range (no excursion)",
  approach_bottom: "Approaching the bottom",
  in_bottom: "In the bottom zone",
  approach_top: "Approaching the top",
  in_top: "In the top zone",
};

// When the state last moved; items whose state moved before that was recorded say so.
const changed = (i) =>
  i.state_changed_at ? `since ${utc(i.state_changed_at)}`
    : i.last_notified_state === "none" ? "not moved yet" : "time not recorded";

// The item's alert hygiene in words: cooldown, snooze, re-arm margin.
const hygiene = (i) => [
  i.cooldown_hours ? `cooldown ${i.cooldown_hours} h` + (i.cooldown_until ? ` (until ${utc(i.cooldown_until)})` : "") : "no cooldown",
  i.snoozed_until ? `snoozed until ${utc(i.snoozed_until)}` : null,
  `re-arms ${i.rearm_margin} past the band`,
].filter(Boolean).map(esc).join("<br>");

const row = (i) => `
  <tr data-pair="${esc(i.pair)}">
    <th scope="row"><a href="#/pair/${esc(i.a)}/${esc(i.b)}">${esc(i.pair)}</a></th>
    <td data-label="Notification state" class="span">${esc(STATES[i.last_notified_state] ?? i.last_notified_state)}
      <span class="since">${changed(i)}</span></td>
    <td data-label="Notify on approach"><label class="switch"><input type="checkbox" name="notify_approach"${i.notify_approach ? " checked" : ""}>
      <span>on approach<span class="sr"> for ${esc(i.pair)}</span></span></label></td>
    <td data-label="Notify in zone"><label class="switch"><input type="checkbox" name="notify_in_zone"${i.notify_in_zone ? " checked" : ""}>
      <span>in zone<span class="sr"> for ${esc(i.pair)}</span></span></label></td>
    <td class="hygiene span" data-label="Alert hygiene">${hygiene(i)}</td>
    <td data-label="Watched since">${utc(i.created_at)}</td>
    <td><button type="button" class="quiet remove">Remove<span class="sr"> ${esc(i.pair)}</span></button></td>
  </tr>`;

export async function renderWatchlist(main) {
  const list = await api("/watchlist");
  main.innerHTML = `
    <h1>Watchlist</h1>
    <p class="lede">Pairs you are told about when their ratio approaches or enters the bottom or
      top zone. Add a pair from its page.</p>
    <p id="watch-message" class="error" role="alert"></p>
    ${list.count === 0
      ? `<p>Your watchlist is empty. Open a pair from the <a href="#/screen">screen</a> and choose
         “Watch”.</p>`
      : tableWrap("Watchlist", `<table class="data stack" id="watchlist">
      <thead><tr><th scope="col">Pair</th><th scope="col">Notification state (changed)</th>
        <th scope="col">Notify on approach</th><th scope="col">Notify in zone</th>
        <th scope="col">Alert hygiene</th><th scope="col">Watched since</th><th scope="col"><span class="sr">Remove</span></th></tr></thead>
      <tbody>${list.items.map(row).join("")}</tbody></table>`, "stacks")}`;
  const message = main.querySelector("#watch-message");
  const table = main.querySelector("#watchlist");
  if (!table) return;
  const itemOf = (el) => list.items.find((i) => i.pair === el.closest("tr").dataset.pair);
  table.addEventListener("change", async (event) => {
    const box = event.target;
    const item = itemOf(box);
    message.textContent = "";
    try {
      await api(`/watchlist/${pairPath(item.a, item.b)}?${box.name}=${box.checked}`, { method: "PUT" });
    } catch (e) {
      box.checked = !box.checked;
      message.textContent = e.message;
    }
  });
  table.addEventListener("click", async (event) => {
    const button = event.target.closest("button.remove");
    if (!button) return;
    const item = itemOf(button);
    message.textContent = "";
    try {
      await api(`/watchlist/${pairPath(item.a, item.b)}`, { method: "DELETE" });
      await renderWatchlist(main);
      main.querySelector("#watch-message").textContent = `Removed ${item.pair}.`;
    } catch (e) {
      message.textContent = e.message;
    }
  });
}
