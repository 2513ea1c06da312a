// Screen: every survivor of the latest screen, the zones where the strategy acts first,
// sortable and filterable (the choice kept in the URL), cards on a phone, a CSV file, and a
// notice when a newer screen is published (checked with its ETag every minute).

import { ApiError, api, apiIfChanged, apiText, pairPath } from "./api.js";
import { fileStamp, saveText } from "./download.js";
import { EVIDENCE_PLACEHOLDER, fillEvidence } from "./evidence.js";
import {
  ago, barsAgo, closedAgo, dataTime, day, days, intraday, decisive, EDGE_ZONES, esc, lagWords, num, pct, positionBar, pvalue,
  ratioMove, tableWrap, utc, zoneBadge, ZONE_WORDS,
} from "./format.js";
import { keepRevalidating } from "./live.js";

const growth = (leg) =>
  `<span class="growth">${pct(leg.growth_pct)}</span>` +
  `<span class="bh">hold ${pct(leg.buy_hold?.growth_pct)}</span>`;

// The limits of the screen's rules that are on, by column: a value near one is written with
// the digits that decide it. A rule at its "off" value (or a filter without it) gives none.
function limits(screen) {
  const t = { ...(screen.filter?.thresholds ?? {}), ...(screen.screen_rules ?? {}) };
  const on = (value, off) => (Number.isFinite(value) && value !== off ? value : undefined);
  return {
    hurst: on(t.hurst_below),
    adf: on(t.adf_below, 1),
    range: on(t.min_range_width, 0),
    halflife: on(t.max_half_life_days, 0),
    coint: on(t.coint_below, 1),
    cointq: on(t.coint_q_below, 1),
    corr: on(t.min_return_correlation, -1),
    kalmanz: on(t.kalman_z_beyond, 0),
    drift: on(t.max_kalman_hedge_drift, 0),
    // not rules: how an intraday screen's closes and spans read (absent for a daily screen)
    bar: screen.bar,
    barSeconds: screen.bar_seconds,
  };
}

const rule = (words, limit) => (limit === undefined ? "" : `${words} ${limit}`);
const isNumber = (x) => typeof x === "number" && Number.isFinite(x);

// Each column: its header, the value it sorts by, its cell (given the rules' limits), the rule
// it is judged by, and whether a phone card shows it (`wide`: the table only). `low` columns
// read best when small, so they sort ascending first.
const COLUMNS = [
  { key: "pair", label: "Pair", sort: (s) => s.pair.join("/"),
    cell: (s) => `<a href="#/pair/${esc(s.pair[0])}/${esc(s.pair[1])}">${esc(s.pair.join("/"))}</a>` +
      `<span class="sector">${esc(s.sector)}</span>` },
  { key: "zone", label: "Zone", sort: (s) => s.metrics.position, cell: (s) => zoneBadge(s.metrics.zone) },
  { key: "position", label: "Position", num: true, sort: (s) => s.metrics.position,
    cell: (s) => positionBar(s.metrics.position) },
  { key: "score", label: "Score", num: true, rule: () => "of 100", sort: (s) => s.score, cell: (s) => num(s.score, 1) },
  { key: "halflife", label: "Half&#8209;life", num: true, low: true,
    rule: (l) => rule("≤", l.halflife),
    sort: (s) => s.metrics.half_life_days,
    cell: (s, l) => `${days(s.metrics.half_life_days, 1, l.halflife)}${barsOf(s.metrics.half_life_days, l)}` },
  { key: "cointq", label: "Coint q", num: true, low: true, rule: (l) => rule("<", l.cointq),
    sort: (s) => s.coint_qvalue,
    cell: (s, l) => pvalue(s.coint_qvalue, 3, l.cointq) },
  { key: "hurst", label: "Hurst", num: true, low: true, rule: (l) => rule("<", l.hurst),
    sort: (s) => s.metrics.hurst, cell: (s, l) => decisive(s.metrics.hurst, 2, l.hurst) },
  { key: "adf", label: "ADF p", num: true, low: true, wide: true, rule: (l) => rule("<", l.adf),
    sort: (s) => s.metrics.adf_pvalue, cell: (s, l) => pvalue(s.metrics.adf_pvalue, 3, l.adf) },
  { key: "coint", label: "Coint p", num: true, low: true, wide: true, rule: (l) => rule("<", l.coint),
    sort: (s) => s.metrics.coint_pvalue, cell: (s, l) => pvalue(s.metrics.coint_pvalue, 3, l.coint) },
  { key: "corr", label: "Return corr", num: true, wide: true, rule: (l) => rule("≥", l.corr),
    sort: (s) => s.metrics.return_correlation,
    cell: (s, l) => decisive(s.metrics.return_correlation, 2, l.corr) },
  { key: "kalmanz", label: "Kalman z", num: true, wide: true,
    tip: "Today's Kalman spread ln A − (β ln B + α) in its own standard deviations (σ): " +
      "positive when A is dear against β of B. The kalman_band strategy swaps out of A above +1 σ.",
    rule: (l) => rule("|z| ≥", l.kalmanz),
    sort: (s) => s.metrics.kalman_z,
    cell: (s) => (isNumber(s.metrics.kalman_z) ? `${num(s.metrics.kalman_z, 2)}&nbsp;σ` : num(null)) },
  { key: "drift", label: "β drift", num: true, low: true, wide: true,
    tip: "How far the Kalman hedge ratio β moved over the window (after its first 30 closes), " +
      "as a share of today's β: a large drift is a hedge that does not hold still.",
    rule: (l) => (l.drift === undefined ? "" : `|drift| ≤ ${num(100 * l.drift, 0)} %`),
    sort: (s) => (isNumber(s.metrics.kalman_hedge_drift) ? Math.abs(s.metrics.kalman_hedge_drift) : null),
    cell: (s) => (isNumber(s.metrics.kalman_hedge_drift)
      ? `${pct(100 * s.metrics.kalman_hedge_drift, 1)} of β` : num(null)) },
  { key: "range", label: "Range", num: true,
    rule: (l) => (l.range === undefined ? "" : `≥ ×${num(Math.exp(l.range), 2)}`),
    sort: (s) => s.metrics.range_width,
    cell: (s, l) => `<span title="ratio's high ÷ low over the band window; ln(max/min) = ${
      num(s.metrics.range_width, 3)}">${ratioMove(s.metrics.range_width, l.range)}</span>` },
  { key: "touches", label: "Touches", num: true, wrap: true, wide: true,
    sort: (s) => (s.metrics.touches_low ?? 0) + (s.metrics.touches_high ?? 0),
    cell: (s) => `${s.metrics.touches_low ?? "—"}&nbsp;low · ${s.metrics.touches_high ?? "—"}&nbsp;high` },
  { key: "growthA", label: "Leg A growth", num: true, rule: () => "in-sample", sort: (s) => s.backtest.A.growth_pct,
    cell: (s) => growth(s.backtest.A) },
  { key: "growthB", label: "Leg B growth", num: true, rule: () => "in-sample", sort: (s) => s.backtest.B.growth_pct,
    cell: (s) => growth(s.backtest.B) },
  { key: "data", label: "Data to", sort: (s) => s.data_time ?? "",
    cell: (s, l) => `${dataTime(s.data_time, l.bar)}${behindMark(s, l)}` },
];

// On an intraday screen a span in days shows its count of bars under it ("14 bars").
function barsOf(spanDays, l) {
  if (!intraday(l.bar) || !isNumber(spanDays) || !l.barSeconds) return "";
  return `<span class="bars">${num((spanDays * 86400) / l.barSeconds, 0)}&nbsp;bars</span>`;
}

// A survivor whose data ends before the screen's newest close, marked with the API's own
// count (`data_behind_days`; on an intraday screen `data_behind_bars`, "5 bars (5 h)
// behind"), so its numbers never read as current as the others'.
function behindMark(s, l) {
  if (!s.data_behind) return "";
  if (intraday(l.bar) && isNumber(s.data_behind_bars)) {
    const bars = s.data_behind_bars;
    const words = `${bars} bar${bars === 1 ? "" : "s"} (${lagWords(s.data_behind_seconds)})`;
    const title = `Data ends ${dataTime(s.data_time, l.bar)}: ${words} before this screen's newest close`;
    return `<span class="behind" title="${esc(title)}">⚠&nbsp;${words.replaceAll(" ", "&nbsp;")}&nbsp;behind</span>`;
  }
  const n = s.data_behind_days;
  const title = `Data ends ${day(s.data_time)}: ${n} day${n === 1 ? "" : "s"} before this screen's newest close`;
  return `<span class="behind" title="${esc(title)}">⚠&nbsp;${n}&nbsp;d behind</span>`;
}

// The screen's newest close and its age: a day and how long since it closed for daily
// closes; the close time, the bar and the bars closed since for an intraday universe.
function newestWords(screen) {
  const newest = screen.data_time?.newest;
  if (!newest) return "—";
  if (intraday(screen.bar)) return `${dataTime(newest, screen.bar)} (${barsAgo(newest, screen.bar_seconds)})`;
  return `${day(newest)} (${closedAgo(newest)})`;
}

// "edges": the bottom and top zones (where the strategy swaps) first, best score first in each
// part; any column otherwise.
const DEFAULT_SORT = "edges";
const EDGE_RANK = (s) => (EDGE_ZONES.has(s.metrics.zone) ? 0 : s.metrics.zone ? 1 : 2);
const ZONE_CHOICES = { edges: "Bottom and top (edges)", ...ZONE_WORDS };
const plain = (label) => label.replace(/&#8209;/g, "‑");

const cellClass = (c) => {
  const names = [c.num && "num", c.wrap && "touches", c.wide && "wide-only", c.key === "pair" && "pair-cell"];
  const list = names.filter(Boolean).join(" ");
  return list ? ` class="${list}"` : "";
};

// The reader's choice, from the URL's query (#/screen?zone=edges&sort=hurst&dir=asc) and back.
function stateOf(query) {
  const sort = COLUMNS.some((c) => c.key === query.get("sort")) ? query.get("sort") : DEFAULT_SORT;
  const column = COLUMNS.find((c) => c.key === sort);
  const natural = Boolean(column?.num && !column.low);
  const dir = query.get("dir");
  return {
    sort,
    descending: dir === "asc" ? false : dir === "desc" ? true : natural,
    zone: ZONE_CHOICES[query.get("zone")] ? query.get("zone") : "",
    sector: query.get("sector") ?? "",
    text: query.get("q") ?? "",
  };
}

function queryOf(state) {
  const query = new URLSearchParams();
  if (state.zone) query.set("zone", state.zone);
  if (state.sector) query.set("sector", state.sector);
  if (state.text) query.set("q", state.text);
  if (state.sort !== DEFAULT_SORT) {
    query.set("sort", state.sort);
    const column = COLUMNS.find((c) => c.key === state.sort);
    if (state.descending !== Boolean(column.num && !column.low)) {
      query.set("dir", state.descending ? "desc" : "asc");
    }
  }
  return query;
}

// The choice written into the address without a new history entry or a re-render: a reload
// or a copied link shows the same view.
function keepInUrl(state) {
  const query = queryOf(state).toString();
  history.replaceState(history.state, "", `#/screen${query ? `?${query}` : ""}`);
}

// The page; `fresh` ({etag, body}) is a screen already fetched (the newer one the reader
// asked to see), otherwise it is fetched here.
export async function renderScreen(main, args = [], query = new URLSearchParams(), fresh = null) {
  const answer = fresh ?? (await apiIfChanged("/screen/latest", null));
  const screen = answer.body;
  const survivors = screen.survivors;
  const rules = limits(screen);
  const state = stateOf(query);
  const sectors = [...new Set(survivors.map((s) => s.sector))].sort();
  if (state.sector && !sectors.includes(state.sector)) state.sector = "";
  const rejected = Object.entries(screen.rejected ?? {})
    .map(([why, n]) => `<li>${esc(why.replaceAll("_", " "))}: ${n}</li>`)
    .join("");
  const edges = survivors.filter((s) => EDGE_ZONES.has(s.metrics.zone)).length;
  const headerOf = (c) => {
    const limit = c.rule?.(rules) ?? "";
    return `${c.label}${limit ? `<span class="rule">${esc(limit)}</span>` : ""}`;
  };
  const labelOf = (c) => {
    const limit = c.rule?.(rules) ?? "";
    return esc(`${plain(c.label)}${limit ? ` (${limit})` : ""}`);
  };
  main.innerHTML = `
    <h1>Screen</h1>
    <p class="lede">Pairs whose ratio keeps returning inside its range: those at an edge of it
      (bottom or top zone, where the strategy swaps) first, best score first. Click a pair for
      its live numbers and chart.</p>
    ${(screen.data_source ?? "").toLowerCase().includes("synthetic")
      ? `<p class="warning">Synthetic data: ${esc(screen.data_source)}. These prices are not real.</p>` : ""}
    <ul class="facts">
      <li><span class="fact-k">Screened</span> <span class="fact-v">${utc(screen.generated_at)} (${ago(screen.generated_at)})</span></li>
      <li><span class="fact-k">Data up to</span> <span class="fact-v">${newestWords(screen)}</span></li>
      <li><span class="fact-k">Pairs screened</span> <span class="fact-v">${screen.n_pairs_screened}</span></li>
      <li><span class="fact-k">Survivors</span> <span class="fact-v">${screen.n_survivors} (${edges} at an edge)</span></li>
    </ul>
    <p id="evidence-summary" class="evidence-summary"></p>
    <div id="new-screen" class="new-screen" role="status"></div>
    ${rejected ? `<details class="rejected"><summary>Rejected pairs by reason</summary><ul>${rejected}</ul></details>` : ""}
    <form class="filters" id="filters" role="search" aria-label="Filter and order the survivors">
      <label>Search <input type="search" name="text" placeholder="ticker or sector"></label>
      <label>Sector <select name="sector"><option value="">all</option>
        ${sectors.map((s) => `<option>${esc(s)}</option>`).join("")}</select></label>
      <label>Zone <select name="zone"><option value="">all</option>
        ${Object.entries(ZONE_CHOICES).map(([z, w]) => `<option value="${z}">${w}</option>`).join("")}
        </select></label>
      <label>Order <select name="sort">
        <option value="${DEFAULT_SORT}">Edges first, then score</option>
        ${COLUMNS.map((c) => `<option value="${c.key}">${esc(plain(c.label))}</option>`).join("")}
        </select></label>
      <button type="button" id="direction" class="quiet" aria-label="Reverse the order">⇅ <span id="direction-words"></span></button>
    </form>
    <div class="table-head">
      <p id="shown" class="count" aria-live="polite"></p>
      <button type="button" id="download-csv" class="quiet">Download CSV</button>
    </div>
    <p id="download-message" class="error" role="alert"></p>
    ${tableWrap("Survivors", `<table class="data cards" id="survivors">
      <thead><tr>${COLUMNS.map(
        (c) => `<th scope="col" data-key="${c.key}"${cellClass(c)}${c.tip ? ` title="${esc(c.tip)}"` : ""}>` +
          `<button type="button">${headerOf(c)}</button></th>`).join("")}</tr></thead>
      <tbody></tbody></table>`, "stacks")}
    <form class="filters" id="any-pair" aria-label="Open any pair">
      <label>Any pair: leg A <input name="a" required placeholder="ETH" autocapitalize="characters"></label>
      <label>leg B <input name="b" required placeholder="BTC" autocapitalize="characters"></label>
      <button type="submit" class="quiet">Open pair</button>
    </form>
    <p id="any-pair-message" class="error" role="alert"></p>
    <p class="hint">Position: 0 is the pair's p5, 1 its p95 (the bar's ticks); bottom zone below
      0.2, top zone above 0.8. Range: how far the ratio moved over the band window, its high
      divided by its low (×3.0: the high is three times the low; the log figure in the tooltip).
      Under a column, the screen's rule for it; a value near its limit is written with the
      digits that decide it. Growth (in-sample): coins gained by each backtest leg over
      ${screen.backtest_days ?? 360} days, beside buying and holding the other coin: a replay
      of the history the pair was picked on, not a forecast. Half-life:
      days for the ratio's deviation from its mean to halve (— when it does not revert); coint
      q: the Engle-Granger p-value corrected for the pairs tested (below 0.05 reads as
      cointegrated); return corr: correlation of the legs' daily returns. The CSV holds every
      survivor with all its metrics.</p>
    ${EVIDENCE_PLACEHOLDER}`;

  const table = main.querySelector("#survivors");
  const body = table.querySelector("tbody");
  const filters = main.querySelector("#filters");
  const labels = COLUMNS.map(labelOf);
  const draw = () => {
    const text = state.text.toLowerCase();
    const column = COLUMNS.find((c) => c.key === state.sort);
    const rows = survivors.filter(
      (s) =>
        (!state.sector || s.sector === state.sector) &&
        (!state.zone || (state.zone === "edges" ? EDGE_ZONES.has(s.metrics.zone) : s.metrics.zone === state.zone)) &&
        (!text || `${s.pair.join("/")} ${s.sector}`.toLowerCase().includes(text)),
    );
    if (column) {
      const sign = state.descending ? -1 : 1;
      rows.sort((x, y) => {
        const a = column.sort(x), b = column.sort(y);
        if (a === b) return 0;
        if (a === null || a === undefined) return 1;
        if (b === null || b === undefined) return -1;
        return (a < b ? -1 : 1) * sign;
      });
    } else {
      rows.sort((x, y) => EDGE_RANK(x) - EDGE_RANK(y) || y.score - x.score);
    }
    const now = Date.now();
    body.innerHTML = rows
      .map((s) => `<tr${s.data_behind ? ' class="data-behind"' : ""}>${COLUMNS.map((c, i) =>
        `<td${cellClass(c)} data-label="${labels[i]}">${c.cell(s, rules, now)}</td>`).join("")}</tr>`)
      .join("");
    layOutTheRest(body);
    for (const th of table.querySelectorAll("th")) {
      if (th.dataset.key === state.sort) {
        th.setAttribute("aria-sort", state.descending ? "descending" : "ascending");
      } else th.removeAttribute("aria-sort");
    }
    filters.sort.value = state.sort;
    const reverse = main.querySelector("#direction");
    reverse.hidden = !column;
    main.querySelector("#direction-words").textContent = state.descending ? "high first" : "low first";
    main.querySelector("#shown").textContent =
      `${rows.length} of ${survivors.length} survivors shown` +
      (column ? "" : `, ${rows.filter((s) => EDGE_ZONES.has(s.metrics.zone)).length} at an edge first`);
    keepInUrl(state);
  };
  const sortBy = (key) => {
    state.sort = key;
    const column = COLUMNS.find((c) => c.key === key);
    state.descending = Boolean(column?.num && !column.low);
  };
  table.querySelector("thead").addEventListener("click", (event) => {
    const th = event.target.closest("th");
    if (!th) return;
    if (state.sort === th.dataset.key) state.descending = !state.descending;
    else sortBy(th.dataset.key);
    draw();
  });
  main.querySelector("#direction").addEventListener("click", () => {
    state.descending = !state.descending;
    draw();
  });
  main.querySelector("#download-csv").addEventListener("click", () => downloadCsv(main, screen));
  filters.text.value = state.text;
  filters.sector.value = state.sector;
  filters.zone.value = state.zone;
  const filter = (event) => {
    state.text = filters.text.value.trim();
    state.sector = filters.sector.value;
    state.zone = filters.zone.value;
    if (event?.target === filters.sort && filters.sort.value !== state.sort) sortBy(filters.sort.value);
    draw();
  };
  filters.addEventListener("input", filter);
  filters.addEventListener("change", filter);
  filters.addEventListener("submit", (event) => event.preventDefault());
  const any = main.querySelector("#any-pair");
  const anyMessage = main.querySelector("#any-pair-message");
  any.addEventListener("submit", async (event) => {
    event.preventDefault();
    anyMessage.textContent = "";
    // Two tickers of /assets, spelled as it spells them (AAPLx) whatever the case typed; an
    // unknown one is named here and nothing opens.
    let known;
    try {
      known = (await api("/assets")).assets.map((x) => x.ticker);
    } catch (e) {
      anyMessage.textContent = e instanceof ApiError ? e.message : String(e);
      return;
    }
    const [a, b] = [any.a.value.trim(), any.b.value.trim()].map(
      (t) => known.find((k) => k.toUpperCase() === t.toUpperCase()) ?? t);
    const unknown = [a, b].find((t) => !known.includes(t));
    if (unknown !== undefined) {
      anyMessage.textContent = `Unknown ticker '${unknown}'. Every ticker is listed on the Assets page.`;
    } else if (a === b) {
      anyMessage.textContent = `Both legs are ${a}; a pair needs two different assets.`;
    } else {
      location.hash = `#/pair/${pairPath(a, b)}`;
    }
  });
  draw();
  showStaleness(screen);
  fillEvidence(main.querySelector("#evidence"), main.querySelector("#evidence-summary"));
  offerNewer(main, table, answer.etag, screen, state);
}

// The rows out of view are skipped at first (site.css: content-visibility), so the first frame
// comes fast; after it they are laid out a hundred at a time while the browser is idle, so soon
// every row is in the accessibility tree and the scrollbar is exact. A newer draw of the same
// body (a sort, a filter) stops the previous pass.
const BATCH = 100;
const idle = (step) => (window.requestIdleCallback ? requestIdleCallback(step) : setTimeout(step, 16));

function layOutTheRest(body) {
  const pass = {};
  body.pass = pass;
  const rows = [...body.rows];
  let next = 0;
  const step = () => {
    if (body.pass !== pass || !body.isConnected) return;
    for (const end = Math.min(rows.length, next + BATCH); next < end; next += 1) {
      rows[next].classList.add("laid");
    }
    if (next < rows.length) idle(step);
  };
  requestAnimationFrame(() => idle(step));
}

// The banner at the top of every page, in the API's words, from the screen this page shows.
function showStaleness(screen) {
  const banner = document.getElementById("stale-banner");
  if (!banner) return;
  banner.textContent = screen.stale ? screen.stale_reason : "";
  banner.hidden = !screen.stale;
}

// Every minute, `/screen/latest` with the ETag of the screen shown: a 304 costs nothing. A
// newer screen is offered, not forced: the reader's order and filters (in the URL) stay.
function offerNewer(main, anchor, etag, shown, state) {
  keepRevalidating(anchor, "/screen/latest", etag, async (screen, answer) => {
    if (screen.generated_at === shown.generated_at) {
      showStaleness(screen); // the same screen judged again (it turned stale): no new rows
      return;
    }
    const notice = main.querySelector("#new-screen");
    notice.innerHTML = `<p>A newer screen was published ${utc(screen.generated_at)}:
      ${screen.n_survivors} survivors. <button type="button" id="show-newer">Show the new screen</button>
      <span class="hint">(your order and filters stay)</span></p>`;
    notice.querySelector("#show-newer").addEventListener("click", async () => {
      await renderScreen(main, [], queryOf(state), answer);
      main.querySelector("h1").tabIndex = -1;
      main.querySelector("h1").focus();
    });
  });
}

// Every survivor with all its metrics and both backtests, as the API writes it (the table's
// sort and filters do not apply), saved as pairscreen-screen-<time of the screen>.csv.
async function downloadCsv(main, screen) {
  const button = main.querySelector("#download-csv");
  const message = main.querySelector("#download-message");
  message.textContent = "";
  button.disabled = true;
  try {
    const text = await apiText("/screen/latest", "text/csv");
    saveText(`pairscreen-screen-${fileStamp(screen.generated_at)}.csv`, text, "text/csv");
  } catch (e) {
    message.textContent = e instanceof ApiError ? e.message : String(e);
  } finally {
    button.disabled = false;
  }
}
