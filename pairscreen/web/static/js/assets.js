// Assets: every ticker of the universe with its data's span and freshness (/assets).

import { api } from "./api.js";
import { esc, num, tableWrap, utc } from "./format.js";

export async function renderAssets(main) {
  const list = await api("/assets");
  main.innerHTML = `
    <h1>Assets</h1>
    <p class="lede">${list.count} assets in the universe, including those the screen rejects.
      Listed ${utc(list.generated_at)}.</p>
    ${tableWrap("Assets", `<table class="data stack" id="assets"><thead><tr>
      <th scope="col">Ticker</th><th scope="col">Sector</th><th scope="col">Class</th>
      <th scope="col">First close</th><th scope="col">Last close</th>
      <th scope="col" class="num">Days</th><th scope="col" class="num">Latest close</th>
      <th scope="col">Freshness</th><th scope="col">Peg</th></tr></thead><tbody>
      ${list.assets.map((a) => `<tr><th scope="row">${esc(a.ticker)}</th><td data-label="Sector">${esc(a.sector)}</td>
        <td data-label="Class">${esc(a.asset_class.replaceAll("_", " "))}</td><td data-label="First close">${esc(a.first_close ?? "—")}</td>
        <td data-label="Last close">${esc(a.last_close ?? "—")}</td><td class="num" data-label="Days">${a.history_days}&nbsp;d</td>
        <td class="num" data-label="Latest close">${num(a.latest_close, a.latest_close !== null && a.latest_close < 10 ? 4 : 2)}</td>
        <td data-label="Freshness">${a.stale ? `<span class="stale">stale: ${a.age_days} days old (allowed ${a.stale_after_days} days)</span>`
          : `fresh (${a.age_days ?? "—"} d)`}</td>
        <td data-label="Peg">${a.peg ? esc(a.peg.status) : "—"}</td></tr>`).join("")}
      </tbody></table>`, "stacks")}`;
}
