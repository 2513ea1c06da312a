// Pegs: active depeg events (Pro) and every tokenized asset's latest peg status, checked
// again every minute while the page is shown (redrawn only when an answer changed).

import { ApiError, apiIfChanged } from "./api.js";
import { esc, num, pct, tableWrap, utc } from "./format.js";
import { keepChecking } from "./live.js";

// Both answers, each revalidated with the ETag held when the server gave one; `held` is the
// previous read ({ events, assets, tags }) or null.
async function read(held) {
  const [events, assets] = await Promise.all([
    apiIfChanged("/peg-events", held?.tags.events).catch((e) => {
      if (e instanceof ApiError && e.status === 403) return { etag: null, body: { refused: e.message } };
      throw e;
    }),
    apiIfChanged("/assets", held?.tags.assets),
  ]);
  return {
    events: events?.body ?? held.events,
    assets: assets?.body ?? held.assets,
    tags: { events: events ? events.etag : held.tags.events, assets: assets ? assets.etag : held.tags.assets },
  };
}

export async function renderPegs(main, args = [], query = null, known = null) {
  const current = known ?? (await read(null));
  const { events, assets } = current;
  const pegged = assets.assets.filter((a) => a.peg);
  const eventsHtml = events.refused
    ? `<div class="panel tier-note"><p><strong>Depeg events need the Pro tier.</strong>
         ${esc(events.refused)}</p>
         <p>On Pro this section lists every tokenized asset that has stayed off its peg for
         12 hours or more (at least 6 samples): since when, until when, for how long, the median drift
         and the reference price source. The latest status of each asset is below for every tier.</p></div>`
    : events.events.length === 0
      ? `<p>No active depeg event.</p><p id="peg-check">${esc(events.note)}</p>`
      : tableWrap("Active depeg events", `<table class="data stack" id="events"><thead><tr>
          <th scope="col">Asset</th><th scope="col">Class</th><th scope="col">Off peg since</th>
          <th scope="col">Last off peg</th><th scope="col" class="num">Hours</th><th scope="col" class="num">Median drift</th>
          <th scope="col" class="num">Samples</th><th scope="col">Reference</th></tr></thead><tbody>
          ${events.events.map((e) => `<tr><th scope="row">${esc(e.ticker)}</th>
            <td data-label="Class">${esc(e.asset_class.replaceAll("_", " "))}</td><td data-label="Off peg since">${utc(e.first_unhealthy)}</td>
            <td data-label="Last off peg">${utc(e.last_unhealthy)}</td>
            <td class="num" data-label="Hours">${num(e.hours_unhealthy, 1)}&nbsp;h</td><td class="num" data-label="Median drift">${pct(e.median_drift_pct, 2)}</td>
            <td class="num" data-label="Samples">${e.sample_count}</td><td data-label="Reference">${esc(e.reference_source)}</td></tr>`).join("")}
          </tbody></table>`, "stacks") + `<p id="peg-check">${esc(events.note)}</p>`;
  // When any asset was last sampled, for every tier (the events' note is Pro only).
  const checked = pegged.map((a) => a.peg.checked_at).filter(Boolean).sort().at(-1);
  const lastCheck = checked
    ? `<p id="peg-last-sample">Newest peg sample: ${utc(checked)}.</p>`
    : `<p id="peg-last-sample" class="notice">Pegs have never been checked: no peg sample was ever taken.</p>`;
  main.innerHTML = `
    <h1>Pegs</h1>
    <p class="lede">Tokenized assets (gold, stocks, stablecoins) against the price they track.</p>
    <h2>Active depeg events</h2>
    ${eventsHtml}
    <h2>Latest status</h2>
    ${lastCheck}
    ${tableWrap("Latest peg status", `<table class="data stack" id="peg-status"><thead><tr>
      <th scope="col">Asset</th><th scope="col">Status</th><th scope="col" class="num">Drift</th>
      <th scope="col" class="num">Threshold</th><th scope="col" class="num">Market</th>
      <th scope="col" class="num">Reference</th><th scope="col">Checked</th><th scope="col">Why unknown</th></tr></thead><tbody>
      ${pegged.map((a) => `<tr><th scope="row">${esc(a.ticker)}</th>
        <td data-label="Status"><span class="peg peg-${esc(a.peg.status)}">${esc(a.peg.status)}${a.peg.active_event ? " (depeg event)" : ""}</span></td>
        <td class="num" data-label="Drift">${pct(a.peg.drift_pct, 2)}</td><td class="num" data-label="Threshold">±${num(a.peg.threshold_pct, 1)} %</td>
        <td class="num" data-label="Market">${num(a.peg.market_price, 2)}</td><td class="num" data-label="Reference">${num(a.peg.reference_price, 2)}</td>
        <td data-label="Checked">${utc(a.peg.checked_at)}</td><td data-label="Why unknown"${a.peg.reason ? "" : ' class="empty"'}>${esc(a.peg.reason ?? "")}</td></tr>`).join("")}
      </tbody></table>`, "stacks")}
    <p class="hint" id="peg-refresh">Checked again every minute while this page is open.</p>`;
  const anchor = main.querySelector("#peg-status");
  // What the page shows (the list's own timestamp changes on every answer).
  const shownOf = (e, a) => JSON.stringify([e, a.assets.filter((x) => x.peg)]);
  const shown = shownOf(events, assets);
  keepChecking(anchor, async () => {
    const next = await read(current);
    if (shownOf(next.events, next.assets) === shown || !anchor.isConnected) return;
    const y = window.scrollY;
    await renderPegs(main, args, query, next);
    window.scrollTo(0, y);
    main.querySelector("#peg-refresh").textContent = `Updated ${utc(new Date().toISOString())}.`;
  });
}
