// Account: tier, expiry, today's quota and the time to its reset (/me).

import { api } from "./api.js";
import { esc, span, tableWrap, utc } from "./format.js";

export async function renderAccount(main) {
  const me = await api("/me");
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
    <p>Where watchlist and depeg notifications go; your operator sets them
      (<code>pairscreen channels set</code>).</p>
    ${tableWrap("Notification channels", `<table class="data" id="channels"><thead><tr>
      <th scope="col">Channel</th><th scope="col">Address</th><th scope="col">State</th>
      <th scope="col">Depeg alerts</th></tr></thead><tbody>
      ${(me.channels ?? []).map((c) => `<tr><th scope="row">${esc(c.kind)}</th>
        <td>${esc(c.address)}</td><td>${c.enabled ? "enabled" : "disabled"}</td>
        <td>${c.depeg_alerts ? "every asset" : "watched assets"}</td></tr>`).join("")}
      </tbody></table>`)}`;
}
