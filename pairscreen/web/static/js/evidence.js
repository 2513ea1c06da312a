// "Does this screen work?": the latest published evaluation of the screen's rules (/evidence),
// in words. Every figure is a field of the API's answer, formatted, never recomputed.

import { api, ApiError } from "./api.js";
import { ago, day, esc, num, pct, tableWrap, utc } from "./format.js";

// Log points (0.05) written as a signed percentage ("+5.0 %").
const lp = (x) => (x === null || x === undefined ? "—" : pct(x * 100));

// A horizon as a trader reads it: "30 days" on a daily universe, "24 h" on an intraday one
// (whose evidence states its horizons in hours beside the fractional days).
const span = (x) => (x.horizon_hours === undefined ? `${x.horizon_days} days` : `${x.horizon_hours} h`);

const READING_WORDS = {
  evidence: (d) =>
    d.estimate > 0
      ? "Survivors did better than the other pairs in the same zones, by more than chance explains."
      : "Survivors did worse than the other pairs in the same zones, by more than chance explains.",
  // The test is one-sided (alternative "greater"): a difference below zero, however clear,
  // is no evidence that the rules work; the sentence says which way it went.
  no_evidence: (d) =>
    d.alternative && d.ci95 && d.ci95[1] < 0
      ? "No evidence that the rules work: survivors did worse than the other pairs in the same zones."
      : "No evidence that survivors do better: they cannot be told apart from the other pairs in the same zones (the difference is within what chance gives).",
  too_few_observations: () => "Too few observations to tell:",
};

function horizonCard(h) {
  const move = h.reversion;
  const d = move.difference;
  const range = d.ci95 ? `${lp(d.ci95[0])} to ${lp(d.ci95[1])}` : "—";
  const warnings = h.warnings.length
    ? `<ul class="evidence-reasons">${h.warnings.map((w) => `<li>${esc(w)}</li>`).join("")}</ul>`
    : "";
  const s = move.survivors, r = move.rest;
  return `
    <article class="evidence-horizon reading-${esc(d.reading)}" data-horizon="${h.horizon_days}">
      <h3>${span(h)} after a screen</h3>
      <p class="evidence-verdict"><strong>${esc(READING_WORDS[d.reading](d))}</strong></p>
      ${warnings}
      <dl class="evidence-figures">
        <dt>Survivors' move back toward their range</dt>
        <dd>${lp(s.mean)} on average, ${lp(s.median)} median, ${s.n} pair-days
          (${s.distinct_pairs} pairs, ${s.independent_days} independent periods)</dd>
        <dt>Other pairs in the same zones</dt>
        <dd>${lp(r.mean)} on average, ${lp(r.median)} median, ${r.n} pair-days</dd>
        <dt>Difference</dt>
        <dd class="evidence-difference">${lp(d.estimate)}, 95 % range ${range}
          (p ${num(d.p_value, 3)}, adjusted p ${num(d.p_holm, 3)})</dd>
        <dt>Holding the cheap leg ${span(h)}</dt>
        <dd>survivors ${lp(h.hold_value.survivors.mean)}, others ${lp(h.hold_value.rest.mean)}
          (holding the other leg instead: survivors ${lp(h.hold_other_leg.survivors.mean)},
          others ${lp(h.hold_other_leg.rest.mean)}), fees included</dd>
      </dl>
    </article>`;
}

// The portfolio line (published with `evaluate --publish --portfolio N`): per horizon the
// picks traded with the strategy beside random in-zone pairs and the whole universe.
function portfolioCard(p, strategy, points) {
  const f = p.portfolio, r = p.random, u = p.universe;
  const range = f.ci95 ? `${lp(f.ci95[0])} to ${lp(f.ci95[1])}` : "—";
  const nullRange = r.range95 ? `${lp(r.range95[0])} to ${lp(r.range95[1])}` : "—";
  const limit = p.max_per_asset === null ? "" : `, no asset in more than ${p.max_per_asset}`;
  return `
    <article class="evidence-portfolio" data-horizon="${p.horizon_days}">
      <h3>A portfolio of the top ${p.size} picks, ${span(p)}</h3>
      <p class="hint">At each day the ${p.size} best-scored survivors in a zone${esc(limit)},
        each traded with the ${esc(strategy)} strategy for ${span(p)}, equal
        amounts, fees and costs included.</p>
      <dl class="evidence-figures">
        <dt>Portfolio</dt>
        <dd class="portfolio-mean">${lp(f.mean)} per ${span(p)}, 95 % range ${range};
          Sharpe ${num(f.sharpe_annualised, 2)} a year; worst drawdown ${pct(f.max_drawdown === null ? null : f.max_drawdown * 100, 0, false)}
          (${f.as_of_days} as-of ${points}, ${num(p.mean_picks, 1)} pairs held, turnover ${pct(p.turnover === null ? null : p.turnover * 100, 0, false)})</dd>
        <dt>The same number of random pairs in the zones</dt>
        <dd class="portfolio-random">${lp(r.mean)} per ${span(p)} (${r.draws} draws, 95 % of them
          ${nullRange}); p ${num(r.p_value, 3)}, the share of draws that did as well</dd>
        <dt>Holding every asset equally</dt>
        <dd class="portfolio-universe">${lp(u.mean)} per ${span(p)}, Sharpe ${num(u.sharpe_annualised, 2)} a year</dd>
      </dl>
    </article>`;
}

const PERIOD_WORDS = {
  after: (e) => `After ${day(e.defaults_chosen_through)}: days the default rules were not chosen on`,
  chosen_on: (e) => `Up to ${day(e.defaults_chosen_through)}: the period the default rules were chosen on (in-sample)`,
};

// The screen's rows per period, the after-period first (as the API orders them).
function periodsTable(evidence) {
  if (!evidence.periods?.length) return "";
  const horizons = evidence.horizons;
  const cell = (p, h) => {
    const row = p.horizons.find((x) => x.horizon_days === h.horizon_days);
    if (!row) return "—";
    const d = row.reversion.difference;
    const range = d.ci95 ? ` (${lp(d.ci95[0])} to ${lp(d.ci95[1])})` : "";
    return `${lp(d.estimate)}${range}: ${esc(SHORT_WORDS[d.reading](d))}`;
  };
  const rows = evidence.periods.map((p) =>
    `<tr data-period="${esc(p.name)}"><th scope="row">${esc(PERIOD_WORDS[p.name]?.(evidence) ?? p.name)}</th>` +
    `<td>${p.from ? `${day(p.from)} to ${day(p.to)}` : "—"}</td><td class="num">${p.as_of_days}</td>` +
    horizons.map((h) => `<td data-label="${span(h)}">${cell(p, h)}</td>`).join("") + "</tr>").join("");
  const points = evidence.bar === undefined ? "days" : "closes";
  return `<h3 id="evidence-periods-title">By period</h3>
    ${tableWrap("By period", `<table class="data row-cards" id="evidence-periods"><thead><tr>
      <th scope="col">Period</th><th scope="col">As-of ${points}</th>
      <th scope="col" class="num">${points === "days" ? "Days" : "Closes"}</th>
      ${horizons.map((h) => `<th scope="col">Difference, ${span(h)}</th>`).join("")}</tr></thead>
      <tbody>${rows}</tbody></table>`)}`;
}

// What the calibration's realised outcome was: trading the strategy, or holding the cheap leg.
export function realisedBy(calibration) {
  return calibration.measure === "excess"
    ? "trading the strategy against holding both legs"
    : "holding the cheap leg";
}

// What the in-sample model return realised, by quintile of it.
function calibrationTable(evidence) {
  const c = evidence.calibration;
  if (!c) return "";
  const rows = c.groups.map((g) =>
    `<tr data-quintile="${g.quintile}"><th scope="row">${g.quintile}</th>` +
    `<td data-label="Model says (log units / year)">${g.n ? `${num(g.model_low, 2)} to ${num(g.model_high, 2)}` : "—"}</td>` +
    `<td class="num" data-label="Model implies over ${c.horizon} days">${lp(g.model_implied)}</td>` +
    `<td class="num" data-label="Realised over ${c.horizon} days">${lp(g.realised_mean)}</td>` +
    `<td data-label="95 % range">${g.ci95 ? `${lp(g.ci95[0])} to ${lp(g.ci95[1])}` : "—"}</td>` +
    `<td class="num" data-label="Pair-days">${g.n}</td></tr>`).join("");
  return `<h3 id="evidence-calibration-title">The model's expected return against what followed</h3>
    <p class="hint">Survivors grouped by their in-sample expected OU return (a model figure
      fitted on the history they were picked on), and what ${realisedBy(c)} for the next
      ${c.horizon} days realised, fees included, ${c.n} pair-days in all.</p>
    ${tableWrap("Calibration", `<table class="data row-cards" id="evidence-calibration"><thead><tr>
      <th scope="col">Quintile</th><th scope="col">Model says (log units / year)</th>
      <th scope="col" class="num">Model implies, ${c.horizon} days</th>
      <th scope="col" class="num">Realised, ${c.horizon} days</th><th scope="col">95 % range</th>
      <th scope="col" class="num">Pair-days</th></tr></thead><tbody>${rows}</tbody></table>`)}`;
}

// The section as the page first shows it; `fillEvidence` replaces its content.
export const EVIDENCE_PLACEHOLDER = `<section id="evidence" class="evidence"
  aria-labelledby="evidence-title"><h2 id="evidence-title">Does this screen work?</h2>
  <p class="loading">Loading…</p></section>`;

// The verdict per horizon in a few words, for the line at the top of the screen page.
const SHORT_WORDS = {
  evidence: (d) => (d.estimate > 0 ? "survivors did better" : "survivors did worse"),
  no_evidence: () => "no evidence survivors do better",
  too_few_observations: () => "too few observations to tell",
};

// The line near the top: each horizon's verdict, and a button to the section with the figures.
function summaryLine({ evidence, message }) {
  const verdicts = evidence
    ? evidence.horizons.map((h) =>
      `${span(h)}: ${esc(SHORT_WORDS[h.reversion.difference.reading](h.reversion.difference))}`).join("; ")
    : esc(message).replace(/\.$/, "");
  return `<strong>Does this screen work?</strong> ${verdicts}.${evidence
    ? ` <button type="button" class="link" id="evidence-jump">See the figures</button>` : ""}`;
}

// Asked for once the survivors' table has painted (the table is what the page is for): the
// latest evaluation, or the API's sentence (none published yet, the server unreachable); with
// `summary`, its verdicts in a line there too.
export function fillEvidence(section, summary = null) {
  requestAnimationFrame(() => setTimeout(async () => {
    let result;
    try {
      result = { evidence: await api("/evidence") };
    } catch (e) {
      result = { message: e instanceof ApiError ? e.message : String(e) };
    }
    if (!section.isConnected) return;
    section.outerHTML = evidenceSection(result);
    if (summary?.isConnected) {
      summary.innerHTML = summaryLine(result);
      summary.querySelector("#evidence-jump")?.addEventListener("click", () => {
        const heading = document.getElementById("evidence-title");
        heading.tabIndex = -1;
        heading.scrollIntoView({ block: "start" });
        heading.focus({ preventScroll: true });
      });
    }
  }));
}

// Which points were replayed: past days, or past bar closes of an intraday universe.
function replayed(e) {
  if (e.bar === undefined) {
    return `The screen's rules replayed on ${e.as_of_days} past days, from ${day(e.from)} to
      ${day(e.to)} (every ${e.every_days} days, each day seeing only the prices known then)`;
  }
  return `The screen's rules replayed at ${e.as_of_days} past closes of ${esc(e.bar)} bars, from
    ${utc(e.from_close)} to ${utc(e.to_close)} (every ${e.every_hours} h, each close seeing only
    the prices known then)`;
}

function through(e) {
  const last = e.bar === undefined ? day(e.data_through) : utc(e.data_through_close);
  return e.data_through ? `<span id="evidence-data-through">Prices up to ${last}.</span>` : "";
}

function evidenceSection({ evidence, message }) {
  const head = `<section id="evidence" class="evidence" aria-labelledby="evidence-title">
    <h2 id="evidence-title">Does this screen work?</h2>`;
  if (!evidence) return `${head}<p class="notice evidence-none">${esc(message)}</p></section>`;
  const points = evidence.bar === undefined ? "days" : "closes";
  const sample = evidence.sample.sampled
    ? `a random ${evidence.sample.pairs} of the universe's ${evidence.sample.of_pairs} pairs`
    : `all ${evidence.sample.pairs} pairs`;
  return `${head}
    <p class="lede">${replayed(evidence)}, on ${sample}: did the pairs it picked in the bottom
      or top zone move back toward their range more than the other pairs sitting in those
      zones? ${through(evidence)}</p>
    ${periodsTable(evidence)}
    <h3 id="evidence-all-title">All ${points}</h3>
    <div class="evidence-grid">${evidence.horizons.map(horizonCard).join("")}</div>
    ${evidence.portfolio
      ? `<div class="evidence-grid">${evidence.portfolio.map((p) => portfolioCard(p, evidence.portfolio_strategy, points)).join("")}</div>`
      : ""}
    ${calibrationTable(evidence)}
    ${evidence.warnings.length
      ? `<ul class="hint evidence-warnings">${evidence.warnings.map((w) => `<li>${esc(w)}</li>`).join("")}</ul>`
      : ""}
    <p class="hint">Moves are log returns in percent (+10 % here is +10.5 % in price, −10 % is
      −9.5 %). The 95 % range allows for pairs of one day moving together, overlapping periods
      and the same pair repeating; "adjusted p" allows for the ${evidence.comparisons}
      comparisons made. Evaluated ${utc(evidence.published_at)} (${ago(evidence.published_at)}).
      Past behaviour, not a promise; no financial advice.</p>
  </section>`;
}
