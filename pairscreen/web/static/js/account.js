// Account: tier, expiry, today's quota and the time to its reset (/me); the notification
// channels, with a form for every kind you may set yourself (GET /me/channels/kinds: Telegram,
// Discord, Slack and any kind a notifier plugin of the service adds; PUT /me/channels/{kind}).

import { api } from "./api.js";
import { esc, span, tableWrap, utc } from "./format.js";

export async function renderAccount(main) {
  const [me, offered] = await Promise.all([api("/me"), api("/me/channels/kinds")]);
  const kinds = offered.kinds;
  // The form offers your own kinds by name, as a list of choices reads best.
  const own = kinds.filter((k) => k.self_service).sort((x, y) => x.name.localeCompare(y.name));
  const label = (name) => kinds.find((k) => k.name === name)?.label ?? name;
  const operators = kinds.filter((k) => !k.self_service).map((k) => k.label);
  const q = me.quota;
  const resets = q.resets_at;
  const used = q.limit_per_day ? (100 * q.used_today) / q.limit_per_day : 0;
  main.innerHTML = `
    <h1>Account</h1>
    <ul class="facts">
      <li><span class="fact-k">E-mail</span> <span class="fact-v">${esc(me.email)}</span></li>
      <li><span class="fact-k">Tier</span> <span class="fact-v">${esc(me.tier)}</span></li>
      <li><span class="fact-k">Valid until</span> <span class="fact-v">${me.is_lifetime ? "lifetime" : utc(me.tier_expires_at)}</span></li>
    </ul>
    <h2>Today's quota</h2>
    <p><strong>${q.remaining_today}</strong> of ${q.limit_per_day} compute units left
      (${q.used_today} used). Snapshots, charts and series cost one unit each; everything else is free.</p>
    <div class="quota-bar" role="progressbar" aria-label="Quota used today" aria-valuemin="0"
         aria-valuemax="${q.limit_per_day}" aria-valuenow="${q.used_today}">
      <span style="width:${used.toFixed(1)}%"></span></div>
    <p>Resets at ${utc(resets)}, in ${span(new Date(resets).getTime() - Date.now())}.</p>
    <h2>Notification channels</h2>
    <p>Where watchlist and depeg notifications go. Your operator sets the
      ${esc(operators.join(" and ") || "other")} addresses (<code>pairscreen channels set</code>); you set
      your own ${esc(own.map((k) => k.label).join(", "))} address below, and turn any channel on or off.
      The secret part of an address (a webhook URL's path) is never shown: a URL shows its host only.</p>
    <p id="channel-message" role="status"></p>
    ${tableWrap("Notification channels", `<table class="data stack" id="channels"><thead><tr>
      <th scope="col">Channel</th><th scope="col">Address</th><th scope="col">State</th>
      <th scope="col">Depeg alerts</th><th scope="col"><span class="sr">Switch</span></th></tr></thead><tbody>
      ${(me.channels ?? []).map((c) => `<tr data-kind="${esc(c.kind)}"><th scope="row" title="${esc(label(c.kind))}">${esc(c.kind)}</th>
        <td data-label="Address" class="span">${esc(c.address)}</td><td data-label="State">${c.enabled ? "enabled" : "disabled"}</td>
        <td data-label="Depeg alerts">${c.depeg_alerts ? "every asset" : "watched assets"}</td>
        <td><button type="button" class="quiet toggle" data-enable="${c.enabled ? "false" : "true"}">
          ${c.enabled ? "Turn off" : "Turn on"}<span class="sr"> ${esc(c.kind)}</span></button></td></tr>`).join("")}
      </tbody></table>`, "stacks")}
    <form id="channel-form" class="filters" aria-label="Set a notification channel">
      <label>Channel <select name="kind">
        ${own.map((k) => `<option value="${esc(k.name)}">${esc(k.label)}</option>`).join("")}
      </select></label>
      <label>Address <input name="address" type="text" autocomplete="off" required
        placeholder="${esc(own[0]?.address_hint ?? "")}"></label>
      <button type="submit">Save channel</button>
    </form>`;
  const message = main.querySelector("#channel-message");
  const change = async (kind, body, done) => {
    message.textContent = "";
    message.className = "";
    try {
      await api(`/me/channels/${encodeURIComponent(kind)}`, { method: "PUT", body });
      await renderAccount(main);
      main.querySelector("#channel-message").textContent = done;
    } catch (e) {
      message.className = "error";
      message.textContent = e.message;
    }
  };
  main.querySelector("#channels").addEventListener("click", (event) => {
    const button = event.target.closest("button.toggle");
    if (!button) return;
    const kind = button.closest("tr").dataset.kind;
    const enabled = button.dataset.enable === "true";
    change(kind, { enabled }, `${kind} ${enabled ? "enabled" : "disabled"}.`);
  });
  const form = main.querySelector("#channel-form");
  form.kind.addEventListener("change", () => {
    form.address.placeholder = own.find((k) => k.name === form.kind.value)?.address_hint ?? "";
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const kind = form.kind.value;
    change(kind, { address: form.address.value.trim() }, `${kind} saved and enabled.`);
  });
}
