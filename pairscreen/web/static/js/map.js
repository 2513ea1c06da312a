// Map: every survivor of the latest screen as one point, its position in its range against
// its Hurst exponent or its half-life, coloured by zone; hovering names the pair, a click
// opens it. Read from /pairs (a few fields per survivor, so 100,000 of them stay small) and
// drawn by plotly.js in WebGL (scattergl). A newer screen (/pairs revalidated with its ETag
// every minute) is offered and drawn on request, the reader's axis and zoom kept.

import { apiIfChanged } from "./api.js";
import { plotly } from "./chart.js";
import { closedAgo, day, EDGE_ZONES, esc, num, utc, ZONE_WORDS } from "./format.js";
import { keepRevalidating } from "./live.js";

const AXES = {
  hurst: {
    field: "hurst", words: "Hurst exponent", title: "Hurst exponent (below 0.5: mean-reverting)",
    hover: "Hurst %{x:.3f}", type: "linear",
  },
  halflife: {
    field: "half_life_days", words: "half-life", title: "Half-life (days, log scale)",
    hover: "half-life %{x:.1f} days", type: "log",
  },
};
// Colour and shape per zone: the shape tells the zones apart without colour.
const STYLE = {
  bottom: { color: "#1f5aa6", symbol: "circle" },
  mid: { color: "#7d8288", symbol: "square" },
  top: { color: "#b04a0c", symbol: "diamond" },
};
const NARROW = 600;
const SVG_LIMIT = 20000; // points SVG still draws in a few seconds, without WebGL

// The points of each zone on the chosen axis, in typed arrays (plotly's WebGL path takes them
// as they are: 100,000 points draw in about a second); `index[zone][k]` is the survivor behind
// point k. A survivor without the value (a half-life of null: the ratio does not revert) is
// left out and counted.
function traces(pairs, axis) {
  const field = AXES[axis].field;
  const zones = Object.keys(STYLE);
  const drawn = (p) => p.zone in STYLE && p[field] !== null && p[field] !== undefined && p.position !== undefined;
  const sizes = Object.fromEntries(zones.map((z) => [z, 0]));
  for (const p of pairs) if (drawn(p)) sizes[p.zone] += 1;
  const parts = Object.fromEntries(zones.map((z) => [z, {
    x: new Float64Array(sizes[z]), y: new Float64Array(sizes[z]), text: new Array(sizes[z]),
    index: new Int32Array(sizes[z]), n: 0,
  }]));
  let missing = 0;
  pairs.forEach((p, i) => {
    if (!drawn(p)) {
      missing += 1;
      return;
    }
    const part = parts[p.zone];
    part.x[part.n] = p[field];
    part.y[part.n] = p.position;
    part.text[part.n] = p.pair;
    part.index[part.n] = i;
    part.n += 1;
  });
  const many = pairs.length > 5000;
  const data = zones.map((zone) => ({
    type: "scattergl",
    mode: "markers",
    name: `${ZONE_WORDS[zone]} zone (${sizes[zone].toLocaleString("en-US")})`,
    x: parts[zone].x,
    y: parts[zone].y,
    text: parts[zone].text,
    marker: {
      color: STYLE[zone].color, symbol: STYLE[zone].symbol, size: many ? 4 : 8,
      opacity: many ? 0.55 : 0.85,
    },
    hovertemplate: `<b>%{text}</b><br>${AXES[axis].hover}<br>position %{y:.2f}<extra>${ZONE_WORDS[zone]}</extra>`,
  }));
  return { data, missing, index: zones.map((z) => parts[z].index) };
}

function layout(axis, narrow) {
  const band = (y, dash, color) => ({
    type: "line", xref: "paper", x0: 0, x1: 1, y0: y, y1: y, line: { color, width: 1, dash },
  });
  return {
    autosize: true,
    hovermode: "closest",
    margin: { l: 56, r: 10, t: 10, b: narrow ? 110 : 60 },
    showlegend: true,
    legend: { orientation: "h", x: 0, y: narrow ? -0.22 : -0.12 },
    xaxis: { title: { text: AXES[axis].title }, type: AXES[axis].type, zeroline: false },
    yaxis: { title: { text: "position (0 = p5, 1 = p95)" }, zeroline: false },
    shapes: [
      band(0, "solid", STYLE.bottom.color), band(1, "solid", STYLE.top.color),
      band(0.2, "dot", STYLE.bottom.color), band(0.8, "dot", STYLE.top.color),
      ...(axis === "hurst"
        ? [{ type: "line", yref: "paper", x0: 0.5, x1: 0.5, y0: 0, y1: 1, line: { color: "#888", width: 1, dash: "dash" } }]
        : []),
    ],
    // Zoom, pan and hidden zones survive a redraw with new points (a newer screen), not a
    // change of axis (its scale is another).
    uirevision: axis,
    font: { family: "system-ui, sans-serif", color: "#1d1d1f" },
    paper_bgcolor: "#fff",
    plot_bgcolor: "#fff",
  };
}

// The screen's time, survivors and zones above the map.
function facts(list) {
  const counts = zoneCounts(list.pairs);
  const edges = list.pairs.filter((p) => EDGE_ZONES.has(p.zone)).length;
  return `
      <li><span class="fact-k">Screened</span> <span class="fact-v">${utc(list.generated_at)}</span></li>
      <li><span class="fact-k">Data up to</span> <span class="fact-v" id="map-data-up-to">${dataUpTo(list.pairs)}</span></li>
      <li><span class="fact-k">Survivors</span> <span class="fact-v">${num(list.pairs.length, 0)} (${num(edges, 0)} at an edge)</span></li>
      ${Object.entries(counts).map(([z, n]) =>
        `<li><span class="fact-k">${ZONE_WORDS[z]} zone</span> <span class="fact-v">${num(n, 0)}</span></li>`).join("")}`;
}

// The newest close the survivors were screened on (each pair's last common close): the day
// and how long ago it closed, or an intraday bar's close time (its pairs carry their lag in
// bars).
function dataUpTo(pairs) {
  const newest = pairs.map((p) => p.data_time).filter(Boolean).sort().pop();
  if (!newest) return "—";
  if (pairs.some((p) => "data_behind_bars" in p)) return `${utc(newest)} (bar close)`;
  return `${day(newest)} (${closedAgo(newest)})`;
}

function zoneCounts(pairs) {
  const counts = Object.fromEntries(Object.keys(STYLE).map((z) => [z, 0]));
  for (const p of pairs) if (p.zone in counts) counts[p.zone] += 1;
  return counts;
}

export async function renderMap(main, args = [], query = new URLSearchParams()) {
  let axis = AXES[query.get("x")] ? query.get("x") : "hurst";
  const [answer, Plotly] = await Promise.all([apiIfChanged("/pairs", null), plotly()]);
  let list = answer.body; // the screen drawn
  main.innerHTML = `
    <h1>Map</h1>
    <p class="lede">Every survivor of the latest screen as one point: where its ratio sits in its
      range (up: toward its p95, down: toward its p5) against how strongly it reverts. Hover a
      point for the pair; click it to open the pair.</p>
    <ul class="facts" id="map-facts">${facts(list)}</ul>
    <div id="new-screen" class="new-screen" role="status"></div>
    <fieldset class="windows" id="map-axis"><legend>Across</legend>
      ${Object.entries(AXES).map(([key, a]) => `<label class="switch"><input type="radio" name="x"
        value="${key}"${key === axis ? " checked" : ""}> ${esc(a.words)}</label>`).join("")}
    </fieldset>
    <p id="map-missing" class="count"></p>
    <div id="map" class="map-plot"></div>
    <p class="hint">Bottom zone (blue circles) below the dotted line at 0.2, top zone (orange
      diamonds) above 0.8: the strategy swaps there. The solid lines are the p5 (0) and the p95
      (1) of each pair's range. The <a href="#/screen?zone=edges">screen</a> lists the same
      survivors with every number.</p>`;
  const element = main.querySelector("#map");
  const missingNote = main.querySelector("#map-missing");
  let index = [];
  const draw = async () => {
    const started = performance.now();
    const pairs = list.pairs;
    const { data, missing, index: behind } = traces(pairs, axis);
    index = behind;
    missingNote.textContent = missing
      ? `${num(missing, 0)} survivors without a ${AXES[axis].words} are not drawn.` : "";
    const plot = (traces) => Plotly.react(element, traces, layout(axis, element.clientWidth < NARROW), {
      responsive: true, displaylogo: false, modeBarButtonsToRemove: ["select2d", "lasso2d"],
    });
    await plot(data);
    // A browser without WebGL: a screen small enough is drawn in SVG instead.
    if (element.querySelector(".no-webgl") && pairs.length <= SVG_LIMIT) {
      Plotly.purge(element);
      await plot(data.map((trace) => ({ ...trace, type: "scatter" })));
    }
    const counts = zoneCounts(pairs);
    element.setAttribute("aria-label",
      `Map of ${pairs.length} survivors: position against ${AXES[axis].words}; ` +
      `${counts.bottom} in the bottom zone, ${counts.mid} mid, ${counts.top} in the top zone.`);
    // When the frame with every point is on screen: the page's own measure of the draw.
    requestAnimationFrame(() => {
      element.dataset.drawnMs = String(Math.round(performance.now() - started));
      element.dataset.drawnAt = String(performance.now());
    });
  };
  await draw();
  element.on("plotly_click", (event) => {
    const point = event.points?.[0];
    const pair = point && list.pairs[index[point.curveNumber]?.[point.pointNumber]];
    if (pair) location.hash = `#/pair/${encodeURIComponent(pair.a)}/${encodeURIComponent(pair.b)}`;
  });
  main.querySelector("#map-axis").addEventListener("change", (event) => {
    axis = event.target.value;
    history.replaceState(history.state, "", `#/map${axis === "hurst" ? "" : `?x=${axis}`}`);
    draw();
  });
  offerNewer(main, element, answer.etag, () => list, async (newer) => {
    list = newer;
    main.querySelector("#map-facts").innerHTML = facts(list);
    await draw();
  });
}

// Every minute, /pairs with the ETag of the screen drawn: a 304 costs nothing. A newer screen
// is offered, not forced (the reader may be hovering a point); showing it keeps the axis and
// the zoom.
function offerNewer(main, anchor, etag, drawn, show) {
  keepRevalidating(anchor, "/pairs", etag, async (newer) => {
    if (newer.generated_at === drawn().generated_at) return;
    const notice = main.querySelector("#new-screen");
    notice.innerHTML = `<p>A newer screen was published ${utc(newer.generated_at)}:
      ${num(newer.pairs.length, 0)} survivors. <button type="button" id="show-newer">Show it on the map</button>
      <span class="hint">(your axis and zoom stay)</span></p>`;
    notice.querySelector("#show-newer").addEventListener("click", async () => {
      notice.innerHTML = "";
      main.querySelector("h1").focus();
      await show(newer);
    });
  });
}
