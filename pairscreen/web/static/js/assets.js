// Assets: every ticker of the universe with its data's span and freshness (/assets).

import { api } from "./api.js";
import { esc, num, tableWrap, utc } from "./format.js";

export async function renderAssets(main) {
  const list = await api("/assets");
  main.innerHTML = `
    <h1>Assets</h1>
    <p class="lede">${list.count} assets in the universe, including those the screen rejects.
      Listed ${utc(list.generated_at)}.</p>
    ${tableWrap("Assets", `<table class="data" id="assets"><thead><tr>
      <th scope="col">Ticker</th><th scope="col">Sector</th><th scope="col">Class</th>
      <th scope="col">First close</th><th scope="col">Last close</th>
      <th scope="col" class="num">Days</th><th scope="col" class="num">Latest close</th>
      <th scope="col">Freshness</th><th scope="col">Peg</th></tr></thead><tbody>
      ${list.assets.map((a) => `<tr><th scope="row">${esc(a.ticker)}</th><td>${esc(a.sector)}</td>
        <td>${esc(a.asset_class.replaceAll("_", " "))}</td><td>${esc(a.first_close ?? "—")}</td>
        <td>${esc(a.last_close ?? "—")}</td><td class="num">${a.history_days}</td>
        <td class="num">${num(a.latest_close, a.latest_close !== null && a.latest_close < 10 ? 4 : 2)}</td>
        <td>${a.stale ? `<span class="stale">stale: ${a.age_days} days old (allowed ${a.stale_after_days})</span>`
          : `fresh (${a.age_days ?? "—"} d)`}</td>
        <td>${a.peg ? esc(a.peg.status) : "—"}</td></tr>`).join("")}
      </tbody></table>`)}`;
}
