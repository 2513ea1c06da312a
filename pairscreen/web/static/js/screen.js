// Screen: every survivor of the latest screen, sortable and filterable, and as a CSV file.

import { api, ApiError, apiText } from "./api.js";
import { fileStamp, saveText } from "./download.js";
import { EVIDENCE_PLACEHOLDER, fillEvidence } from "./evidence.js";
import { ago, closedAgo, day, esc, num, pct, positionBar, tableWrap, utc, zoneBadge, ZONE_WORDS } from "./format.js";

const growth = (leg) =>
  `<span class="growth">${pct(leg.growth_pct)}</span>` +
  `<span class="bh">hold ${pct(leg.buy_hold?.growth_pct)}</span>`;

// Each column: its header, the value it sorts by, and its cell. `low` columns read best when
// small, so their first click sorts ascending.
const COLUMNS = [
  { key: "pair", label: "Pair", sort: (s) => s.pair.join("/"),
    cell: (s) => `<a href="#/pair/${esc(s.pair[0])}/${esc(s.pair[1])}">${esc(s.pair.join("/"))}</a>` },
  { key: "sector", label: "Sector", sort: (s) => s.sector, cell: (s) => esc(s.sector) },
  { key: "zone", label: "Zone", sort: (s) => s.metrics.position, cell: (s) => zoneBadge(s.metrics.zone) },
  { key: "position", label: "Position", num: true, sort: (s) => s.metrics.position,
    cell: (s) => positionBar(s.metrics.position) },
  { key: "score", label: "Score", num: true, sort: (s) => s.score, cell: (s) => num(s.score, 1) },
  { key: "hurst", label: "Hurst", num: true, low: true, sort: (s) => s.metrics.hurst,
    cell: (s) => num(s.metrics.hurst) },
  { key: "adf", label: "ADF p", num: true, low: true, sort: (s) => s.metrics.adf_pvalue,
    cell: (s) => num(s.metrics.adf_pvalue, 3) },
  { key: "halflife", label: "Half&#8209;life (days)", num: true, low: true,
    sort: (s) => s.metrics.half_life_days, cell: (s) => num(s.metrics.half_life_days, 1) },
  { key: "coint", label: "Coint p", num: true, low: true, sort: (s) => s.metrics.coint_pvalue,
    cell: (s) => num(s.metrics.coint_pvalue, 3) },
  { key: "corr", label: "Return corr", num: true, sort: (s) => s.metrics.return_correlation,
    cell: (s) => num(s.metrics.return_correlation, 2) },
  { key: "range", label: "Range", num: true, sort: (s) => s.metrics.range_width_pct,
    cell: (s) => `${num(s.metrics.range_width_pct, 0)} %` },
  { key: "touches", label: "Touches", num: true, wrap: true,
    sort: (s) => (s.metrics.touches_low ?? 0) + (s.metrics.touches_high ?? 0),
    cell: (s) => `${s.metrics.touches_low ?? "—"}&nbsp;low · ${s.metrics.touches_high ?? "—"}&nbsp;high` },
  { key: "growthA", label: "Leg A growth", num: true, sort: (s) => s.backtest.A.growth_pct,
    cell: (s) => growth(s.backtest.A) },
  { key: "growthB", label: "Leg B growth", num: true, sort: (s) => s.backtest.B.growth_pct,
    cell: (s) => growth(s.backtest.B) },
  { key: "data", label: "Data to", sort: (s) => s.data_time ?? "", cell: (s) => day(s.data_time) },
];

const cellClass = (c) =>
  c.num || c.wrap ? ` class="${[c.num && "num", c.wrap && "touches"].filter(Boolean).join(" ")}"` : "";

export async function renderScreen(main) {
  const screen = await api("/screen/latest");
  const survivors = screen.survivors;
  const state = { sort: "score", descending: true, sector: "", zone: "", text: "" };
  const sectors = [...new Set(survivors.map((s) => s.sector))].sort();
  const rejected = Object.entries(screen.rejected ?? {})
    .map(([why, n]) => `<li>${esc(why.replaceAll("_", " "))}: ${n}</li>`)
    .join("");
  const newest = screen.data_time?.newest;
  main.innerHTML = `
    <h1>Screen</h1>
    <p class="lede">Pairs whose ratio keeps returning inside its range, best score first.
      Click a pair for its live numbers and chart.</p>
    ${(screen.data_source ?? "").toLowerCase().includes("synthetic")
      ? `<p class="warning">Synthetic data: ${esc(screen.data_source)}. These prices are not real.</p>` : ""}
    <ul class="facts">
      <li><span class="fact-k">Screened</span> <span class="fact-v">${utc(screen.generated_at)} (${ago(screen.generated_at)})</span></li>
      <li><span class="fact-k">Data up to</span> <span class="fact-v">${newest ? `${day(newest)} (${closedAgo(newest)})` : "—"}</span></li>
      <li><span class="fact-k">Pairs screened</span> <span class="fact-v">${screen.n_pairs_screened}</span></li>
      <li><span class="fact-k">Survivors</span> <span class="fact-v">${screen.n_survivors}</span></li>
    </ul>
    ${rejected ? `<details class="rejected"><summary>Rejected pairs by reason</summary><ul>${rejected}</ul></details>` : ""}
    <form class="filters" id="filters" role="search" aria-label="Filter the survivors">
      <label>Search <input type="search" name="text" placeholder="ticker or sector"></label>
      <label>Sector <select name="sector"><option value="">all</option>
        ${sectors.map((s) => `<option>${esc(s)}</option>`).join("")}</select></label>
      <label>Zone <select name="zone"><option value="">all</option>
        ${Object.entries(ZONE_WORDS).map(([z, w]) => `<option value="${z}">${w}</option>`).join("")}
        </select></label>
    </form>
    <div class="table-head">
      <p id="shown" class="count" aria-live="polite"></p>
      <button type="button" id="download-csv" class="quiet">Download CSV</button>
    </div>
    <p id="download-message" class="error" role="alert"></p>
    ${tableWrap("Survivors", `<table class="data" id="survivors">
      <thead><tr>${COLUMNS.map(
        (c) => `<th scope="col" data-key="${c.key}"${c.num ? ' class="num"' : ""}>` +
          `<button type="button">${c.label}</button></th>`).join("")}</tr></thead>
      <tbody></tbody></table>`)}
    <form class="filters" id="any-pair" aria-label="Open any pair">
      <label>Any pair: leg A <input name="a" required placeholder="ETH" autocapitalize="characters"></label>
      <label>leg B <input name="b" required placeholder="BTC" autocapitalize="characters"></label>
      <button type="submit" class="quiet">Open pair</button>
    </form>
    <p class="hint">Position: 0 is the pair's p5, 1 its p95 (the bar's ticks); bottom zone below
      0.2, top zone above 0.8. Growth: coins gained by each backtest leg over
      ${screen.backtest_days ?? 360} days, beside buying and holding the other coin. Half-life:
      days for the ratio's deviation from its mean to halve (— when it does not revert); coint p:
      the Engle-Granger p-value (below 0.05 reads as cointegrated); return corr: correlation of
      the legs' daily returns. The CSV holds every survivor with all its metrics.</p>
    ${EVIDENCE_PLACEHOLDER}`;

  const table = main.querySelector("#survivors");
  const body = table.querySelector("tbody");
  const draw = () => {
    const text = state.text.toLowerCase();
    const column = COLUMNS.find((c) => c.key === state.sort);
    const rows = survivors.filter(
      (s) =>
        (!state.sector || s.sector === state.sector) &&
        (!state.zone || s.metrics.zone === state.zone) &&
        (!text || `${s.pair.join("/")} ${s.sector}`.toLowerCase().includes(text)),
    );
    const sign = state.descending ? -1 : 1;
    rows.sort((x, y) => {
      const a = column.sort(x), b = column.sort(y);
      if (a === b) return 0;
      if (a === null || a === undefined) return 1;
      if (b === null || b === undefined) return -1;
      return (a < b ? -1 : 1) * sign;
    });
    body.innerHTML = rows
      .map((s) => `<tr>${COLUMNS.map((c) =>
        `<td${cellClass(c)}>${c.cell(s)}</td>`).join("")}</tr>`)
      .join("");
    for (const th of table.querySelectorAll("th")) {
      if (th.dataset.key === state.sort) {
        th.setAttribute("aria-sort", state.descending ? "descending" : "ascending");
      } else th.removeAttribute("aria-sort");
    }
    main.querySelector("#shown").textContent =
      `${rows.length} of ${survivors.length} survivors shown`;
  };
  table.querySelector("thead").addEventListener("click", (event) => {
    const th = event.target.closest("th");
    if (!th) return;
    if (state.sort === th.dataset.key) state.descending = !state.descending;
    else {
      state.sort = th.dataset.key;
      const column = COLUMNS.find((c) => c.key === state.sort);
      state.descending = Boolean(column.num && !column.low);
    }
    draw();
  });
  main.querySelector("#download-csv").addEventListener("click", () => downloadCsv(main, screen));
  const filters = main.querySelector("#filters");
  const filter = () => {
    state.text = filters.text.value.trim();
    state.sector = filters.sector.value;
    state.zone = filters.zone.value;
    draw();
  };
  filters.addEventListener("input", filter);
  filters.addEventListener("change", filter);
  filters.addEventListener("submit", (event) => event.preventDefault());
  const any = main.querySelector("#any-pair");
  any.addEventListener("submit", (event) => {
    event.preventDefault();
    const [a, b] = [any.a.value.trim(), any.b.value.trim()].map(encodeURIComponent);
    location.hash = `#/pair/${a}/${b}`;
  });
  draw();
  fillEvidence(main.querySelector("#evidence"));
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
