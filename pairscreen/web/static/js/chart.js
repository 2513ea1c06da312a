// The pair chart, drawn by plotly.js (its strict build, vendored; loaded on first use)
// from /pair/{a}/{b}/series: every value plotted is a value of that response.

const BOTTOM = "#1f5aa6";
const TOP = "#b04a0c";
const INK = "#1d1d1f";
const OU = "#2e7d32"; // the OU entry / exit levels
const SPREAD = "#6a1b9a"; // a strategy's own spread, in its panel under the ratio
const ZONE_COLOURS = { bottom: BOTTOM, mid: "#5f6368", top: TOP };

let loading = null; // the one plotly.js script tag, shared by the pair chart and the map

export function plotly() {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  loading ??= new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = "/static/vendor/plotly.js-strict-dist-min/plotly-strict.min.js";
    script.onload = () => resolve(window.Plotly);
    script.onerror = () => reject(new Error("The chart library did not load."));
    document.head.append(script);
  });
  return loading;
}

// Below this width (px) the legend goes under the plot on more lines, with room kept for it.
const NARROW = 600;

// The margins, legend and axis titles of a chart this wide: a phone gets a taller legend area.
// With a strategy's spread (`spread`), the ratio takes the top of the plot and the spread a
// panel under it on the same dates.
function frame(narrow, pair, spread = false) {
  const panels = spread ? {
    yaxis2: {
      domain: [0, 0.26], title: { text: narrow ? "" : "Kalman spread" }, automargin: true,
      fixedrange: false, zeroline: false,
    },
  } : {};
  return {
    ...panels,
    margin: { l: 48, r: 8, t: narrow ? 28 : 12, b: narrow ? 200 : 90 },
    legend: {
      orientation: "h", traceorder: "normal", x: 0, y: narrow ? -0.1 : -0.12,
      font: { size: narrow ? 11 : 12 },
    },
    yaxis: {
      title: { text: narrow ? "" : `ln(${pair})` }, automargin: true,
      fixedrange: false, zeroline: false, ...(spread ? { domain: [0.33, 1] } : {}),
    },
  };
}

// Keep the plot the size of its container whatever changes it (a window resize, a phone
// turned, a sidebar): Plotly's own `responsive` follows only the window. Crossing the
// narrow width re-lays the legend; any other change only resizes.
function followContainer(Plotly, element, pair, spread) {
  element.resizeWatch?.disconnect();
  let narrow = element.clientWidth < NARROW;
  const watch = new ResizeObserver(() => {
    if (!element.isConnected || !element.data) return watch.disconnect();
    const now = element.clientWidth < NARROW;
    if (now !== narrow) {
      narrow = now;
      Plotly.relayout(element, frame(now, pair, spread));
    } else {
      Plotly.Plots.resize(element);
    }
  });
  watch.observe(element);
  element.resizeWatch = watch;
}

// A UTC close time as plotly.js reads a date axis ("2023-04-01 00:00:00"): it takes no
// offset, and every time the API serves is UTC.
const plotTime = (iso) => String(iso).slice(0, 19).replace("T", " ");

const line = (x, y, name, style, extra = {}) => ({
  type: "scatter", mode: "lines", x, y, name, line: style, hoverinfo: "skip", ...extra,
});

function swaps(series, leg, symbol) {
  const trades = series.trades[leg];
  return {
    type: "scatter",
    mode: "markers",
    name: `leg ${leg} swaps (starts in ${series[leg.toLowerCase()]})`,
    x: trades.map((t) => (t.close_time ? plotTime(t.close_time) : t.date)),
    y: trades.map((t) => t.log_ratio),
    text: trades.map((t) => `bought ${series[t.bought.toLowerCase()]}`),
    marker: {
      symbol,
      size: leg === "A" ? 11 : 7,
      color: trades.map((t) => (t.bought === "A" ? BOTTOM : TOP)),
      line: { width: 1.5, color: trades.map((t) => (t.bought === "A" ? BOTTOM : TOP)) },
    },
    hovertemplate: `%{x}<br>leg ${leg}: %{text}<extra></extra>`,
  };
}

// Today's optimal OU entry and exit (Bertram), flat across the backtest window, when the
// pair has an OU fit (`ou_levels` null otherwise).
function ouLevels(series, bx) {
  const levels = series.ou_levels || {};
  return [["entry", "OU entry"], ["exit", "OU exit"]]
    .filter(([key]) => levels[key] !== null && levels[key] !== undefined)
    .map(([key, name]) =>
      line(bx, bx.map(() => levels[key]), `${name} (today's fit)`, { color: OU, width: 1.2, dash: "dashdot" }));
}

// The strategy's own decision line and its levels (`spread_lines`: the kalman_band
// strategy's Kalman spread, ±entry·√Q and exit·√Q), in the panel under the ratio; none for
// a strategy that draws none.
function spreadPanel(series, bx, start) {
  const lines = series.spread_lines || {};
  if (!lines.spread) return [];
  const part = (name) => (lines[name] || []).slice(start);
  const panel = { yaxis: "y2", hoverinfo: "skip" };
  return [
    line(bx, part("upper"), "+entry · √Q (swap out of A above)", { color: TOP, width: 1 }, panel),
    line(bx, part("lower"), "−entry · √Q", { color: BOTTOM, width: 1 }, panel),
    line(bx, part("exit"), "exit · √Q (swap back below)", { color: "#5f6368", width: 1, dash: "dot" }, panel),
    line(bx, part("spread"), "Kalman spread e", { color: SPREAD, width: 1.1 }, {
      yaxis: "y2", hovertemplate: "%{x}<br>Kalman spread %{y:.4f}<extra></extra>",
    }),
  ];
}

export async function drawChart(element, series) {
  const Plotly = await plotly();
  // Intraday bars are drawn at their close times (a time axis in hours), daily closes at
  // their days.
  const hourly = Boolean(series.close_times);
  const x = hourly ? series.close_times.map(plotTime) : series.dates;
  const startAt = hourly ? plotTime(series.backtest_start_close) : series.backtest_start;
  const start = x.indexOf(startAt);
  const bx = x.slice(start);
  const band = (name) => series.bands[name].slice(start);
  const trigger = (name) => series.triggers[name].slice(start);
  const custom = x.map((_, i) => [series.ratio[i], series.position[i]]);
  const traces = [
    line(bx, band("p5"), "p5", { color: BOTTOM, width: 1 }),
    line(bx, band("p15"), "p5–p15 band", { color: BOTTOM, width: 1, dash: "dash" },
      { fill: "tonexty", fillcolor: "rgba(47,109,181,0.18)" }),
    line(bx, band("p85"), "p85", { color: TOP, width: 1, dash: "dash" }),
    line(bx, band("p95"), "p85–p95 band", { color: TOP, width: 1 },
      { fill: "tonexty", fillcolor: "rgba(194,90,16,0.18)" }),
    line(bx, trigger("low"), "swap level 0.2", { color: BOTTOM, width: 1.2, dash: "dot" }),
    line(bx, trigger("high"), "swap level 0.8", { color: TOP, width: 1.2, dash: "dot" }),
    ...ouLevels(series, bx),
    ...spreadPanel(series, bx, start),
    {
      type: "scatter", mode: "lines", x, y: series.log_ratio, name: `ln(${series.pair})`,
      line: { color: INK, width: 1.4 }, customdata: custom,
      hovertemplate:
        "%{x}<br>ln ratio %{y:.4f}<br>ratio %{customdata[0]:.6g}<br>position %{customdata[1]:.2f}<extra></extra>",
    },
    swaps(series, "A", "circle-open"),
    swaps(series, "B", "diamond"),
    {
      type: "scatter", mode: "markers", name: `now (${series.current.zone})`,
      x: [x[x.length - 1]], y: [series.current.log_ratio],
      marker: { size: 13, color: ZONE_COLOURS[series.current.zone], line: { color: "#fff", width: 2 } },
      hovertemplate:
        `%{x}<br>now: ln ratio %{y:.4f}<br>position ${series.current.position.toFixed(2)} (${series.current.zone})<extra></extra>`,
    },
  ];
  const spread = Boolean(series.spread_lines?.spread);
  const layout = {
    ...frame(element.clientWidth < NARROW, series.pair, spread),
    autosize: true, // the size is the container's (.chart.drawn in site.css), on every resize
    showlegend: true,
    hovermode: "closest",
    xaxis: { type: "date", fixedrange: false },
    shapes: [{
      type: "line", xref: "x", yref: "paper", x0: startAt, x1: startAt,
      y0: 0, y1: 1, line: { color: "#888", width: 1, dash: "dot" },
    }],
    annotations: [{
      xref: "x", yref: "paper", x: startAt, y: 1, text: "backtest starts",
      showarrow: false, xanchor: "left", yanchor: "top", font: { size: 11, color: "#444" },
    }],
    font: { family: "system-ui, sans-serif", color: INK },
    paper_bgcolor: "#fff",
    plot_bgcolor: "#fff",
  };
  element.classList.add("drawn");
  await Plotly.react(element, traces, layout, {
    responsive: true, displaylogo: false, modeBarButtonsToRemove: ["select2d", "lasso2d"],
  });
  followContainer(Plotly, element, series.pair, spread);
  element.setAttribute(
    "aria-label",
    `Chart of ln(${series.pair}) over ${x.length} ${hourly ? "bars" : "days"} with its bands, swap levels and ` +
      `${series.trades.A.length + series.trades.B.length} swaps; today's position ` +
      `${series.current.position.toFixed(2)}, ${series.current.zone} zone.`,
  );
}
