// Pair: the latest screen's verdict (free), the live snapshot (one quota unit), the chart
// (one more), watch / unwatch. The URL (#/pair/A/B?bt=N) names the pair and the window.

import { api, ApiError, BASE, pairPath } from "./api.js";
import { drawChart } from "./chart.js";
import { barsAgo, dataTime, day, esc, intraday, num, pct, pegWords, positionBar, pvalue, tableWrap, utc, zoneBadge } from "./format.js";
import { realisedBy } from "./evidence.js";

// The metrics, with their unit and what they mean (docs/methodology.md in one line each).
const GLOSSARY = [
  ["position", "", (v) => positionBar(v), "Where today's log-ratio sits between the window's p5 (0) and p95 (1)."],
  ["zone", "", (v) => zoneBadge(v), "Bottom below 0.2, top above 0.8, mid between."],
  ["r_current", "log units", (v) => num(v, 4), "Today's log-ratio ln(A/B)."],
  ["p5", "log units", (v) => num(v, 4), "5th percentile of the 540-day log-ratio window."],
  ["p15", "log units", (v) => num(v, 4), "15th percentile of the window."],
  ["p85", "log units", (v) => num(v, 4), "85th percentile of the window."],
  ["p95", "log units", (v) => num(v, 4), "95th percentile of the window."],
  ["z_score", "std devs", (v) => num(v), "Distance of today's log-ratio from the window mean."],
  ["hurst", "", (v) => num(v, 3), "Below 0.5 the ratio tends to revert; above, to trend."],
  ["variance_ratio", "", (v) => num(v, 3), "Lo-MacKinlay variance ratio at 20 days: below 1 the ratio reverts."],
  ["variance_ratio_pvalue", "", (v) => pvalue(v), "Robust p-value of a variance ratio of 1 (a random walk)."],
  ["hurst_rs", "", (v) => num(v, 3), "Rescaled-range Hurst exponent, kept for comparison; the filter does not use it."],
  ["hurst_rs_reason", "", (v) => (v ? esc(v) : "—"), "Why hurst_rs is empty, when the window holds too few closes."],
  ["adf_pvalue", "", (v) => pvalue(v), "Augmented Dickey-Fuller p-value: small means stationary."],
  ["trend_slope", "log units / day", (v) => num(v, 5), "Least-squares slope of the log-ratio."],
  ["range_width", "log units", (v) => num(v, 3), "Max minus min of the window's log-ratio."],
  ["range_width_pct", "%", (v) => num(v, 1), "The range width times 100."],
  ["touches_low", "times", (v) => v ?? "—", "Visits of the p5 band in the window."],
  ["touches_high", "times", (v) => v ?? "—", "Visits of the p95 band in the window."],
  ["half_life_days", "days", (v) => num(v, 1), "Days for a deviation of the log-ratio from its mean to halve (AR(1) fit); — when it does not revert."],
  ["coint_pvalue", "", (v) => pvalue(v), "Engle-Granger cointegration p-value, the larger of the two orders: below 0.05 reads as cointegrated both ways."],
  ["coint_pvalue_ab", "", (v) => pvalue(v), "Engle-Granger p-value of log A on log B."],
  ["coint_pvalue_ba", "", (v) => pvalue(v), "Engle-Granger p-value of log B on log A."],
  ["hedge_ratio", "", (v) => num(v, 3), "OLS slope of log A on log B, the spread the A-on-B test checks; the log-ratio assumes 1."],
  ["hedge_ratio_ba", "", (v) => num(v, 3), "OLS slope of log B on log A, the spread the B-on-A test checks."],
  ["johansen_trace", "", (v) => num(v, 2), "Johansen trace statistic (rank 0 against 1 or more): above its 95 % critical value reads as cointegrated."],
  ["johansen_trace_crit95", "", (v) => num(v, 2), "The trace statistic's 95 % critical value."],
  ["return_correlation", "", (v) => num(v, 2), "Pearson correlation of the legs' daily log returns over the window."],
  ["breakeven_fee", "per swap", (v) => (v === null || v === undefined ? "—" : pct(100 * v, 3, false)), "In-sample: the fee per swap up to which the 360-day backtest's closed swaps still break even (at least 3 closed swaps; the open position is not counted). History, not a forecast."],
  ["breakeven_swaps", "swaps", (v) => v ?? "—", "The closed swaps the break-even fee counts."],
  ["breakeven_fee_reason", "", (v) => (v ? esc(v) : "—"), "Why the break-even fee is empty, when it is."],
  ["ou_mean", "log units", (v) => num(v, 4), "θ: the long-run mean of the log-ratio fitted as an Ornstein-Uhlenbeck process; — when it does not revert (see ou_reason)."],
  ["ou_speed", "per day", (v) => num(v, 4), "μ: how fast the ratio returns to θ (exact OU fit, per calendar day)."],
  ["ou_sigma", "per √day", (v) => num(v, 4), "σ: the OU volatility of the log-ratio."],
  ["ou_half_life_days", "days", (v) => num(v, 1), "ln 2 / μ: calendar days for a deviation from θ to halve."],
  ["ou_reason", "", (v) => (v ? esc(v) : "—"), "Why the OU fields are empty, when they are."],
  ["ou_entry", "log units", (v) => num(v, 4), "Bertram's optimal entry level (below θ) for the round-trip cost ou_cost."],
  ["ou_exit", "log units", (v) => num(v, 4), "Bertram's optimal exit level, 2θ − entry."],
  ["ou_expected_trade_days", "days", (v) => num(v, 1), "In-sample model figure: expected days of one round trip between the two levels, if the fitted process held."],
  ["ou_expected_return_per_year", "log units / year", (v) => num(v, 3), "In-sample model figure: the log return per year the fitted process implies trading at these levels, net of costs. Not a forecast: see what such figures realised below."],
  ["ou_cost", "log units", (v) => num(v, 5), "Round-trip cost c = −2 ln(1 − fee − slippage)."],
  ["kalman_hedge_ratio", "", (v) => num(v, 3), "β of the Kalman filter of ln A = β ln B + α after the last close: a hedge ratio that moves with the market (the OLS hedge_ratio is one fit over the window)."],
  ["kalman_intercept", "log units", (v) => num(v, 4), "α of the same filter after the last close."],
  ["kalman_spread", "log units", (v) => num(v, 4), "Today's forecast error ln A − (β ln B + α), with yesterday's state: positive when A is dear."],
  ["kalman_spread_std", "log units", (v) => num(v, 4), "The standard deviation the filter expects of that error."],
  ["kalman_z", "std devs", (v) => num(v), "The forecast error in its own standard deviations."],
  ["kalman_hedge_drift", "of β", (v) => (v === null || v === undefined ? "—" : pct(100 * v, 1)), "How far β moved over the window (after its first 30 closes), as a share of today's β."],
  ["kalman_q", "per close", (v) => (v === null || v === undefined ? "—" : Number(v).toExponential(2)), "The state noise variance q the filter ran with: the plugin's setting, or this pair's maximum-likelihood estimate when fit = \"mle\"."],
  ["kalman_r", "log units²", (v) => (v === null || v === undefined ? "—" : Number(v).toExponential(2)), "The observation noise variance r the filter ran with, set or fitted as q."],
  ["kalman_reason", "", (v) => (v ? esc(v) : "—"), "Why the Kalman fields are empty, when they are."],
  ["volume_a", "quote / day", (v) => num(v, 0), "Leg A's mean daily volume over 30 days."],
  ["volume_b", "quote / day", (v) => num(v, 0), "Leg B's mean daily volume over 30 days."],
];

// Figures fitted or backtested on the history the pair was picked on: marked "in-sample".
const IN_SAMPLE = new Set(["ou_expected_return_per_year", "ou_expected_trade_days", "breakeven_fee"]);
const IN_SAMPLE_TIP = "Fitted or backtested on the history this pair was picked on: a model or history figure, not a forecast.";
const REALISED_TIP = "Realised after each pick: the strategy's returns over the days that followed the screen's day, which nothing was fitted on.";
const inSample = (key) => (IN_SAMPLE.has(key)
  ? ` <span class="in-sample" title="${esc(IN_SAMPLE_TIP)}">in-sample</span>` : "");

// The backtest windows the service takes as `bt`, read once from its served contract: 90, 180
// and 360 days, or a universe's own `[screen] backtest_days` (an hourly universe's 3 and 7);
// the contract's default (the longest) is the page's. The contract also names an intraday
// universe's bar (`info.x-pairscreen-bar`), known before any screen is.
let contractOfService = null;
function servedContract() {
  contractOfService ??= fetch(`${BASE}/openapi.json`).then((response) => response.json());
  return contractOfService;
}
const backtestWindows = () => servedContract().then((c) => c.components.parameters.BacktestDays.schema);
const contractBar = () => servedContract().then((c) => c.info["x-pairscreen-bar"] ?? null);

const pairLink = (a, b, bt) => `#/pair/${pairPath(a, b)}?bt=${bt}`;

export async function renderPair(main, args, query) {
  if (args.length !== 2 || !args[0] || !args[1]) {
    throw new Error(`A pair's address is #/pair/A/B, two tickers; this one is #/pair/${args.join("/")}.`);
  }
  const [a, b] = args;
  const { enum: windows, default: longest } = await backtestWindows();
  const bt = windows.includes(Number(query.get("bt"))) ? Number(query.get("bt")) : longest;
  // The screen's verdict is free (no quota unit): a 404 is a sentence to show, not a failure.
  const screened = api(`/screen/latest/pairs/${pairPath(a, b)}`).catch((e) => {
    if (e instanceof ApiError && e.status === 404) return { missing: e.message };
    throw e;
  });
  const [me, watchlist, verdict, bar] = await Promise.all([api("/me"), api("/watchlist"), screened, contractBar()]);
  const stored = intraday(bar) ? `${esc(bar)} bars` : "daily closes";
  main.innerHTML = `
    <h1>${esc(a)}/${esc(b)}</h1>
    <p class="lede">The ratio of ${esc(a)} to ${esc(b)}, computed live from the stored ${stored}.
      <a href="${esc(pairLink(b, a, bt))}">See ${esc(b)}/${esc(a)}</a>.</p>
    ${screenVerdictHtml(verdict, a, b)}
    <section class="panel" aria-labelledby="cost">
      <h2 id="cost">Live numbers cost quota</h2>
      <p>The snapshot costs <strong>1 unit</strong> of your daily quota and the chart 1 more.
        You have <strong id="remaining">${me.quota.remaining_today}</strong> of
        ${me.quota.limit_per_day} units left today (the quota resets at 00:00 UTC).</p>
      <fieldset class="windows"><legend>Backtest window</legend>
        ${windows.map((d) => `<label><input type="radio" name="bt" value="${d}"${d === bt ? " checked" : ""}> ${d} days</label>`).join("")}
      </fieldset>
      <div class="actions">
        <button type="button" id="snapshot">Compute snapshot (1 unit)</button>
        <button type="button" id="both" class="quiet">Snapshot and chart (2 units)</button>
        <button type="button" id="watch" class="quiet"></button>
      </div>
      <p class="hint">A link to this pair and window (it opens here without spending a unit):
        <a id="view-link" href="${esc(pairLink(a, b, bt))}">${esc(a)}/${esc(b)}, ${bt} days</a>.</p>
      <p id="pair-message" class="error" role="alert"></p>
    </section>
    <section aria-labelledby="chart-title" class="chart-section">
      <h2 id="chart-title">Chart</h2>
      <p class="hint">The log-ratio with its rolling p5/p15/p85/p95 bands, the dotted levels where
        the backtest swaps (0.2 and 0.8 of the band), both legs' swaps and today's point.
        Drag to zoom, double-click to reset.</p>
      <button type="button" id="draw" class="quiet">Draw chart (1 unit)</button>
      <div id="chart" class="chart" role="img" aria-label="Chart not drawn yet"></div>
    </section>
    <div id="snapshot-out"></div>`;

  const message = main.querySelector("#pair-message");
  const out = main.querySelector("#snapshot-out");
  const state = { bt, snapshot: false, chart: false };
  const refreshQuota = async () => {
    const now = await api("/me");
    main.querySelector("#remaining").textContent = now.quota.remaining_today;
  };
  const run = async (what) => {
    message.textContent = "";
    try {
      if (what.snapshot) {
        out.innerHTML = `<p class="loading">Computing…</p>`;
        const snap = await api(`/pair/${pairPath(a, b)}?bt=${state.bt}`);
        out.innerHTML = snapshotHtml(snap);
        state.snapshot = true;
        fillCalibration(out.querySelector("#calibration"), snap.metrics.ou_expected_return_per_year);
      }
      if (what.chart) {
        const series = await api(`/pair/${pairPath(a, b)}/series?bt=${state.bt}`);
        await drawChart(main.querySelector("#chart"), series);
        state.chart = true;
        main.querySelector("#draw").hidden = true;
      }
    } catch (e) {
      message.textContent = e instanceof ApiError ? e.message : String(e);
      if (what.snapshot) out.innerHTML = "";
    }
    await refreshQuota();
  };
  main.querySelector("#snapshot").addEventListener("click", () => run({ snapshot: true }));
  main.querySelector("#both").addEventListener("click", () => run({ snapshot: true, chart: true }));
  main.querySelector("#draw").addEventListener("click", () => run({ chart: true }));
  for (const radio of main.querySelectorAll("input[name=bt]")) {
    radio.addEventListener("change", () => {
      state.bt = Number(radio.value);
      history.replaceState(null, "", pairLink(a, b, state.bt));
      const link = main.querySelector("#view-link");
      link.href = pairLink(a, b, state.bt);
      link.textContent = `${a}/${b}, ${state.bt} days`;
      if (state.snapshot || state.chart) run({ snapshot: state.snapshot, chart: state.chart });
    });
  }
  setupWatch(main, a, b, watchlist, message);
}

// What the latest screen said of this pair, read from the stored screen (free).
function screenVerdictHtml(v, a, b) {
  const head = `<section class="screen-verdict" aria-labelledby="screen-verdict-title">
    <h2 id="screen-verdict-title">In the latest screen</h2>`;
  if (v.missing) return `${head}<p class="notice" id="screen-verdict">${esc(v.missing)}</p></section>`;
  const when = `the screen of ${utc(v.generated_at)}`;
  const said = v.passes_filter
    ? `<p class="verdict pass" id="screen-verdict" data-passes="true">A survivor of ${when}:
        rank ${v.rank} of ${v.n_survivors}, score ${num(v.score, 1)},
        ${zoneBadge(v.zone)} zone (position ${num(v.position)}).</p>`
    : `<p class="verdict fail" id="screen-verdict" data-passes="false">Rejected by ${when}:
        <span class="reason" data-code="${esc(v.reason_code)}">${esc(v.filter_reason)}</span></p>`;
  const order = v.reversed
    ? `<p class="hint">The screen evaluated ${esc(v.pair)}, this pair the other way round
        (the inverse ratio): its verdict is the same pair's.</p>`
    : "";
  return `${head}${said}${order}
    <p class="hint">Free: read from the stored screen, no quota unit spent. A live snapshot
      below recomputes it from today's closes.</p></section>`;
}

function setupWatch(main, a, b, watchlist, message) {
  const button = main.querySelector("#watch");
  const same = (i) => (i.a === a && i.b === b) || (i.a === b && i.b === a);
  let item = watchlist.items.find(same) ?? null;
  const label = () => {
    button.textContent = item ? `Stop watching ${item.pair}` : `Watch ${a}/${b}`;
    button.setAttribute("aria-pressed", item ? "true" : "false");
  };
  button.addEventListener("click", async () => {
    message.textContent = "";
    try {
      if (item) {
        await api(`/watchlist/${pairPath(item.a, item.b)}`, { method: "DELETE" });
        item = null;
      } else {
        item = await api(`/watchlist/${pairPath(a, b)}`, { method: "PUT" });
      }
    } catch (e) {
      message.textContent = e.message;
    }
    label();
  });
  label();
}

function snapshotHtml(s) {
  const m = s.metrics;
  const verdict = s.passes_filter
    ? `<p class="verdict pass">Passes the screen's filter.</p>`
    : `<p class="verdict fail">Rejected by the screen's filter: ${esc(s.filter_reason)}</p>`;
  // On intraday bars a span in days reads with its count of bars beside it ("0.6 days, 14 bars").
  const bars = (key) => (intraday(s.bar) && key.endsWith("_days") && Number.isFinite(m[key])
    ? ` <span class="bars" data-bars="${key}">(${num(m[key] * 86400 / s.bar_seconds, 0)} bars of ${esc(s.bar)})</span>` : "");
  const metricRows = GLOSSARY.filter(([key]) => key in m)
    .map(([key, unit, show, meaning]) =>
      `<tr><th scope="row"><code>${key}</code><span class="meaning">${esc(meaning)}</span></th>` +
      `<td class="num" data-metric="${key}">${show(m[key])}</td><td>${esc(unit)}${bars(key)}${inSample(key)}</td></tr>`)
    .join("");
  // A field this page does not know (a metric plugin's) still shows, under its own name.
  const extra = Object.keys(m).filter((k) => !GLOSSARY.some(([g]) => g === k))
    .map((k) => `<tr><th scope="row"><code>${esc(k)}</code><span class="meaning">From a metric plugin.</span></th>` +
      `<td class="num" data-metric="${esc(k)}">${anyValue(m[k])}</td><td></td></tr>`)
    .join("");
  // Each cell names its column (data-label), which a phone shows as the row stacks.
  const leg = (name, l) =>
    `<tr><th scope="row">Leg ${name} (starts in ${esc(l.base_leg)})</th>` +
    `<td class="num" data-label="Coin growth" data-leg="${name}">${pct(l.growth_pct)}</td>` +
    `<td class="num" data-label="Buy and hold" data-hold="${name}">${pct(l.buy_hold?.growth_pct)}</td>` +
    `<td class="num" data-label="Swaps">${l.n_trades}</td>` +
    `<td class="num" data-label="Max drawdown">${pct(l.max_drawdown_pct, 1, false)}</td>` +
    `<td class="num" data-label="Break-even fee (in-sample)" data-breakeven="${name}" title="${esc(l.breakeven_fee_reason ?? "")}">` +
    `${l.breakeven_fee === null || l.breakeven_fee === undefined ? "—" : pct(100 * l.breakeven_fee, 3, false)}` +
    `${l.breakeven_swaps === null || l.breakeven_swaps === undefined ? "" : ` <small>(${l.breakeven_swaps} closed)</small>`}</td>` +
    `<td class="num" data-label="Open position" data-open="${name}">${pct(l.open_position_pct)}</td></tr>`;
  return `
    <section aria-labelledby="snap-title">
      <h2 id="snap-title">Snapshot</h2>
      <ul class="facts">
        <li><span class="fact-k">Zone</span> <span class="fact-v">${zoneBadge(m.zone)}</span></li>
        <li><span class="fact-k">Position</span> <span class="fact-v">${positionBar(m.position)}</span></li>
        <li><span class="fact-k">Sector</span> <span class="fact-v">${esc(s.sector ?? "—")}</span></li>
        <li><span class="fact-k">Data up to</span> <span class="fact-v" id="data-time">${dataTime(s.data_time, s.bar)}${
          intraday(s.bar) ? ` (${barsAgo(s.data_time, s.bar_seconds)})` : ""}</span></li>
        <li><span class="fact-k">Computed</span> <span class="fact-v">${utc(s.generated_at)}</span></li>
      </ul>
      ${verdict}
      ${verdictsHtml(s.recent_verdicts ?? [])}
      <h3>Backtests over ${s.backtest.history_days} days</h3>
      ${tableWrap("Backtests", `<table class="data row-cards" id="backtests"><thead><tr><th scope="col">Leg</th>
        <th scope="col" class="num">Coin growth</th><th scope="col" class="num">Buy and hold</th>
        <th scope="col" class="num">Swaps</th><th scope="col" class="num">Max drawdown</th>
        <th scope="col" class="num">Break-even fee</th><th scope="col" class="num">Open position</th></tr></thead>
        <tbody>${leg("A", s.backtest.A)}${leg("B", s.backtest.B)}</tbody></table>`)}
      <p class="hint" id="backtest-in-sample"><span class="in-sample" title="${esc(IN_SAMPLE_TIP)}">in-sample</span>
        The backtests replay the history the pair was picked on: coin growth and the break-even
        fee are history, not a forecast. The break-even fee counts closed swaps only (at least
        3); an open position is shown apart, its move since the swap before fees.</p>
      ${ouHtml(m)}
      <h3>Metrics</h3>
      ${tableWrap("Metrics", `<table class="data metrics"><thead><tr><th scope="col">Metric</th>
        <th scope="col" class="num">Value</th><th scope="col">Unit</th></tr></thead>
        <tbody>${metricRows}${extra}</tbody></table>`)}
      <h3>Pegs</h3>
      <ul class="pegs">
        <li>${esc(s.base_a)} (${esc(s.asset_class_a)}): ${esc(pegWords(s.peg.A))}</li>
        <li>${esc(s.base_b)} (${esc(s.asset_class_b)}): ${esc(pegWords(s.peg.B))}</li>
      </ul>
    </section>`;
}

// The OU levels (metrics ou and ou_bands), named as the API and the chart name them.
const OU_SHOWN = [
  ["ou_entry", "OU entry (today's fit)"],
  ["ou_exit", "OU exit (today's fit)"],
  ["ou_mean", "θ, the long-run mean"],
  ["ou_half_life_days", "OU half-life"],
  ["ou_expected_trade_days", "Expected trade"],
  ["ou_expected_return_per_year", "Expected return per year"],
  ["ou_cost", "Round-trip cost"],
];

function ouHtml(m) {
  if (!("ou_entry" in m) && !("ou_mean" in m)) return "";
  const head = `<h3 id="ou-title">OU levels</h3>`;
  if (m.ou_entry === null || m.ou_entry === undefined) {
    return `${head}<p class="notice" id="ou-none">No OU levels: ${esc(m.ou_reason || "the OU fit is null")}.</p>`;
  }
  const items = OU_SHOWN.filter(([key]) => key in m).map(([key, label]) => {
    const [, unit, show, meaning] = GLOSSARY.find(([g]) => g === key);
    return `<li><span class="fact-k">${esc(label)}</span>
      <span class="fact-v" data-ou="${key}">${show(m[key])}${unit ? ` <small>${esc(unit)}</small>` : ""}${inSample(key)}</span>
      <span class="meaning">${esc(meaning)}</span></li>`;
  }).join("");
  return `${head}<p class="hint">Where the ratio's Ornstein-Uhlenbeck fit says to enter and exit
      (Bertram's levels, drawn on the chart as the green lines), today's log-ratio
      ${num(m.r_current, 4)} log units.</p>
    <ul class="facts ou-levels" aria-labelledby="ou-title">${items}</ul>
    <p class="hint" id="calibration" hidden></p>`;
}

// Beside the model's expected return: what survivors whose model said about as much realised
// over the next 30 days, from the published evaluation (free); nothing when there is none.
function fillCalibration(target, expected) {
  if (!target || expected === null || expected === undefined) return;
  api("/evidence").then((evidence) => {
    const table = evidence.calibration;
    const group = calibrationGroup(table, expected);
    if (!group || !target.isConnected) return;
    const range = group.ci95 ? `, 95 % range ${lpct(group.ci95[0])} to ${lpct(group.ci95[1])}` : "";
    target.innerHTML = `<span class="realised" title="${esc(REALISED_TIP)}">what followed</span>
      Pairs whose model said about this (quintile ${group.quintile} of the screen's survivors,
      ${num(group.model_low, 2)} to ${num(group.model_high, 2)} log units / year, about
      ${lpct(group.model_implied)} over ${table.horizon} days) realised
      <strong data-realised="${group.quintile}">${lpct(group.realised_mean)}</strong> over the
      next ${table.horizon} days ${realisedBy(table)}${range} (${group.n} pair-days, evaluated
      up to ${day(evidence.data_through)}).`;
    target.hidden = false;
  }).catch(() => {});
}

// Log points written as a signed percentage, as the evidence section writes them.
const lpct = (x) => (x === null || x === undefined ? "—" : pct(x * 100));

// The calibration group whose model range holds `value`, else the nearest; null without one.
function calibrationGroup(table, value) {
  const filled = (table?.groups ?? []).filter((g) => g.n > 0);
  if (!filled.length) return null;
  const distance = (g) => (value < g.model_low ? g.model_low - value : Math.max(0, value - g.model_high));
  return filled.reduce((best, g) => (distance(g) < distance(best) ? g : best));
}

// The pair in the latest stored screens (the ones a survivor's survived_last counts).
function verdictsHtml(verdicts) {
  if (!verdicts.length) return "";
  const rows = verdicts.map((v) =>
    `<tr><td>${utc(v.generated_at)}${v.as_of ? ` (as of ${esc(v.as_of)})` : ""}</td>` +
    `<td data-survived="${v.survived}">${v.survived ? "survived" : "not a survivor"}</td></tr>`).join("");
  const kept = verdicts.filter((v) => v.survived).length;
  return `<h3>Recent screens</h3>
      <p>A survivor in ${kept} of the last ${verdicts.length} screens (each at least a day apart).</p>
      ${tableWrap("Recent screens", `<table class="data verdicts"><thead><tr><th scope="col">Screen</th>
        <th scope="col">Verdict</th></tr></thead><tbody>${rows}</tbody></table>`)}`;
}

// A plugin's value as it came: a whole number as is, a fraction to 4 digits, text escaped.
function anyValue(v) {
  if (typeof v === "number") return num(v, Number.isInteger(v) ? 0 : 4);
  if (v === null || v === undefined) return num(v);
  return esc(typeof v === "object" ? JSON.stringify(v) : v);
}
