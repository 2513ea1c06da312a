// Formatting only: how the API's numbers are written on the page, never new numbers.

export function esc(value) {
  return String(value ?? "").replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const DASH = "—";

// One formatter per number of digits: building one per call made a 1,000-row table slow.
const FORMATS = new Map();

export function num(x, digits = 2) {
  if (x === null || x === undefined || Number.isNaN(x)) return DASH;
  if (!FORMATS.has(digits)) {
    FORMATS.set(digits, new Intl.NumberFormat("en-US", {
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
    }));
  }
  return FORMATS.get(digits).format(x);
}

// `x` with `digits` decimals, or more when fewer would put it on the wrong side of a rule's
// `threshold` or on it (Hurst 0.496 under "< 0.5" reads 0.496, never 0.50): the precision that
// decides the rule. No threshold (or a rule that is off): `digits` as `num` writes it.
export function decisive(x, digits, threshold) {
  if (x === null || x === undefined || Number.isNaN(x)) return DASH;
  let d = digits;
  if (Number.isFinite(threshold)) {
    for (; d < 8; d += 1) {
      const shown = Number(x.toFixed(d));
      if ((shown < threshold) === (x < threshold) && (shown === threshold) === (x === threshold)) break;
    }
  }
  return num(x, d);
}

// A p- or q-value: below the smallest figure `digits` decimals show, "< 0.001" (never
// "0.000", which reads as impossible), unless a rule's threshold that small needs the digits.
export function pvalue(x, digits = 3, threshold) {
  if (x === null || x === undefined || Number.isNaN(x)) return DASH;
  const floor = 10 ** -digits;
  if (x < floor && !(threshold < 10 * floor)) return `&lt;&nbsp;${num(floor, digits)}`;
  return decisive(x, digits, threshold);
}

// A range width in log units (ln of max/min) as the ratio's move: 1.10 is "×3.0". Two
// significant decimals below ×10 so the small widths a rule decides on stay apart.
export function ratioMove(logWidth, threshold) {
  if (logWidth === null || logWidth === undefined || Number.isNaN(logWidth)) return DASH;
  const move = Math.exp(logWidth);
  return `×${decisive(move, move < 10 ? 2 : 1, Number.isFinite(threshold) ? Math.exp(threshold) : undefined)}`;
}

// Days with the unit ("6.0 d"), a dash for none.
export function days(x, digits = 1, threshold) {
  const shown = decisive(x, digits, threshold);
  return shown === DASH ? DASH : `${shown}&nbsp;d`;
}

// A data age: whole days from the close's day to the current UTC day, the API's `age_days`
// (docs/methodology.md#freshness); the pages show the API's number where it serves one.
export function ageDays(iso, now = Date.now()) {
  if (!iso) return null;
  const dayOf = (ms) => Math.floor(ms / 86400000);
  return Math.max(0, dayOf(now) - dayOf(new Date(String(iso).slice(0, 10)).getTime()));
}

// A signed percentage ("+12.3 %"), or unsigned with `signed` false (a drawdown).
export function pct(x, digits = 1, signed = true) {
  if (x === null || x === undefined) return DASH;
  return `${signed && x > 0 ? "+" : ""}${num(x, digits)} %`;
}

// "2026-11-22 06:00 UTC" from an ISO timestamp (the API's times are UTC).
export function utc(iso) {
  if (!iso) return DASH;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return esc(iso);
  return `${d.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

export function day(iso) {
  return iso ? String(iso).slice(0, 10) : DASH;
}

// A bar smaller than a day ("4h", "1h", "15m"); a daily universe's screen names no bar.
export function intraday(bar) {
  return Boolean(bar) && bar !== "1d";
}

// Where the data ends: the day of a daily close; the close time and the bar of an intraday
// one (its day alone would hide up to a day of bars).
export function dataTime(iso, bar) {
  if (!iso) return DASH;
  return intraday(bar) ? `${utc(iso)}, ${esc(bar)} bar` : day(iso);
}

// How old an intraday bar's close is: the time since it and how many bars have closed since
// (the bars the data lacks), e.g. "closed 6 h 30 min ago, 6 bars since".
export function barsAgo(iso, barSeconds, now = Date.now()) {
  if (!iso || !barSeconds) return DASH;
  const ms = Math.max(0, now - new Date(iso).getTime());
  const bars = Math.floor(ms / (barSeconds * 1000));
  return `closed ${span(ms)} ago, ${bars} bar${bars === 1 ? "" : "s"} since`;
}

// How long ago, in words: "3 h 20 min ago".
export function ago(iso, now = Date.now()) {
  if (!iso) return DASH;
  return `${span(now - new Date(iso).getTime())} ago`;
}

// A daily candle dated ``iso`` (00:00 UTC of its day) is final at 24:00 UTC of that day: within
// the day after, how long ago that was (fresh data does not read as two days old); later, its
// age in whole days as the API counts it (`ageDays`), so no page says a day less than another.
export function closedAgo(iso, now = Date.now()) {
  if (!iso) return DASH;
  const age = ageDays(iso, now);
  if (age <= 1) return `closed ${span(now - new Date(iso).getTime() - 24 * 3600 * 1000)} ago`;
  return `${age} days old`;
}

// A lag of whole bars, as the API's stale reasons say it: "49 h", "45 min", "2 h 15 min".
export function lagWords(seconds) {
  const minutes = Math.floor(seconds / 60);
  const hours = Math.floor(minutes / 60);
  if (!hours) return `${minutes} min`;
  return `${hours.toLocaleString("en")} h${minutes % 60 ? ` ${minutes % 60} min` : ""}`;
}

export function span(ms) {
  const minutes = Math.max(0, Math.round(ms / 60000));
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} days`;
}

export const ZONE_WORDS = { bottom: "Bottom", mid: "Mid", top: "Top" };

// The zone in words and colour (colour is never the only signal).
export function zoneBadge(zone) {
  if (!zone) return DASH;
  return `<span class="zone zone-${esc(zone)}">${esc(ZONE_WORDS[zone] ?? zone)}</span>`;
}

// Where the ratio sits between p5 (left tick) and p95 (right tick), and beyond them.
export function positionBar(position) {
  if (position === null || position === undefined) return DASH;
  const shown = Math.min(1.2, Math.max(-0.2, position));
  const left = ((shown + 0.2) / 1.4) * 100;
  const where =
    position < 0 ? "below p5" : position > 1 ? "above p95" : "between p5 and p95";
  // One element per bar (the band and the mark are its pseudo-elements): a 1,000-row table
  // lays out fast.
  return (
    `<span class="pos" title="position ${num(position)} (${where})">` +
    `<span class="pos-track" aria-hidden="true" style="--at:${left.toFixed(1)}%"></span>` +
    `<span class="pos-num">${num(position)}</span></span>`
  );
}

export function pegWords(peg) {
  if (!peg) return "native (no peg)";
  const drift = peg.drift_pct === null ? "" : `, drift ${pct(peg.drift_pct, 2)}`;
  const event = peg.active_event ? ", in an active depeg event" : "";
  return `${peg.status}${drift}${event}`;
}

// The zones where the strategy acts: the ratio near an edge of its range.
export const EDGE_ZONES = new Set(["bottom", "top"]);

// A <div> that scrolls its table sideways on narrow screens, reachable by keyboard; `kind`
// adds a class ("stacks": its table becomes cards on a phone).
export function tableWrap(label, tableHtml, kind = "") {
  return `<div class="table-wrap${kind ? ` ${kind}` : ""}" role="region" aria-label="${esc(label)}" tabindex="0">${tableHtml}</div>`;
}
