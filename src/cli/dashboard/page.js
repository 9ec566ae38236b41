// The dashboard of a running `gpufec run`: polls /api/dashboard and shows
// its values as text (each with its raw number in data-value) and as charts
// drawn on canvases; nothing is loaded from elsewhere.
"use strict";

const POLL_MS = 500;
const COLORS = ["#4fc3f7", "#ffb74d", "#81c784", "#ba68c8", "#e57373", "#fff176"];

// Numbers as engineers read them.
function sci(x) { return x === null || x === undefined || !isFinite(x) ? "n/a" : x === 0 ? "0" : x.toExponential(2); }
function fixed(x, d) { return x === null || x === undefined || !isFinite(x) ? "n/a" : x.toFixed(d); }
function count(x) { return x === null || x === undefined ? "n/a" : x.toLocaleString("en-US"); }

// Put `text` in element `id`, with the raw `value` beside it.
function show(id, text, value) {
  const e = document.getElementById(id);
  if (!e) return;
  e.textContent = text;
  e.dataset.value = value === null || value === undefined ? "" : String(value);
}

function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

// A line chart on `canvas`: `series` of {label, color, points: [[x, y]],
// band: [[x, low, high]], dash}; y on a log scale when `log`.
function chart(canvas, series, log, yUnit) {
  const ratio = window.devicePixelRatio || 1;
  const w = canvas.clientWidth, h = canvas.clientHeight;
  canvas.width = w * ratio; canvas.height = h * ratio;
  const g = canvas.getContext("2d");
  g.scale(ratio, ratio);
  g.clearRect(0, 0, w, h);
  const pad = { l: 64, r: 12, t: 10, b: 34 };
  const ys = [], xs = [];
  for (const s of series) {
    for (const p of s.points) if (p[1] !== null && (!log || p[1] > 0)) { xs.push(p[0]); ys.push(p[1]); }
    for (const b of s.band || []) if (b[2] !== null && (!log || b[2] > 0)) { xs.push(b[0]); ys.push(b[2]); if (b[1] > 0 || !log) ys.push(b[1]); }
  }
  g.font = "11px DejaVu Sans, sans-serif";
  g.fillStyle = "#8b98aa";
  if (xs.length === 0) {
    g.fillText("waiting for values…", pad.l, h / 2);
    return;
  }
  const x0 = 0, x1 = Math.max(...xs, 1);
  let y0, y1;
  if (log) {
    y0 = Math.pow(10, Math.floor(Math.log10(Math.min(...ys))));
    y1 = Math.pow(10, Math.ceil(Math.log10(Math.max(...ys))));
    if (y1 <= y0) y1 = y0 * 10;
  } else {
    y0 = 0; y1 = Math.max(...ys) * 1.1 || 1;
  }
  const X = x => pad.l + (x - x0) / (x1 - x0) * (w - pad.l - pad.r);
  const Y = y => log
    ? pad.t + (Math.log10(y1) - Math.log10(Math.max(y, y0))) / (Math.log10(y1) - Math.log10(y0)) * (h - pad.t - pad.b)
    : pad.t + (y1 - y) / (y1 - y0) * (h - pad.t - pad.b);
  // Grid and axes.
  g.strokeStyle = "#2a3544"; g.lineWidth = 1;
  const yticks = [];
  if (log) { for (let e = Math.log10(y0); e <= Math.log10(y1) + 1e-9; e++) yticks.push(Math.pow(10, e)); }
  else { const step = niceStep(y1 - y0, 5); for (let y = 0; y <= y1 + 1e-12; y += step) yticks.push(y); }
  g.textAlign = "right"; g.textBaseline = "middle";
  for (const y of yticks) {
    g.beginPath(); g.moveTo(pad.l, Y(y)); g.lineTo(w - pad.r, Y(y)); g.stroke();
    g.fillText(log ? "1e" + Math.round(Math.log10(y)) : fmtTick(y), pad.l - 6, Y(y));
  }
  const xstep = niceStep(x1 - x0, 8);
  g.textAlign = "center"; g.textBaseline = "top";
  for (let x = 0; x <= x1 + 1e-9; x += xstep) {
    g.beginPath(); g.moveTo(X(x), pad.t); g.lineTo(X(x), h - pad.b); g.stroke();
    g.fillText(fmtTick(x), X(x), h - pad.b + 4);
  }
  g.fillText("run time (s)", (pad.l + w - pad.r) / 2, h - 14);
  g.save(); g.translate(12, (pad.t + h - pad.b) / 2); g.rotate(-Math.PI / 2);
  g.textBaseline = "middle"; g.fillText(yUnit, 0, 0); g.restore();
  // Bands, then lines.
  for (const s of series) {
    const band = (s.band || []).filter(b => b[2] !== null && (!log || b[2] > 0));
    if (band.length > 1) {
      g.fillStyle = s.color + "33";
      g.beginPath();
      band.forEach((b, i) => i ? g.lineTo(X(b[0]), Y(b[2])) : g.moveTo(X(b[0]), Y(b[2])));
      for (let i = band.length - 1; i >= 0; i--) g.lineTo(X(band[i][0]), log && !(band[i][1] > 0) ? h - pad.b : Y(band[i][1]));
      g.closePath(); g.fill();
    }
    g.strokeStyle = s.color; g.lineWidth = 2; g.setLineDash(s.dash || []);
    g.beginPath();
    let open = false;
    for (const p of s.points) {
      if (p[1] === null || (log && !(p[1] > 0))) { open = false; continue; }
      open ? g.lineTo(X(p[0]), Y(p[1])) : g.moveTo(X(p[0]), Y(p[1]));
      open = true;
    }
    g.stroke(); g.setLineDash([]);
  }
}

function niceStep(span, n) {
  const raw = span / n, p = Math.pow(10, Math.floor(Math.log10(raw || 1)));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}
function fmtTick(v) { return Math.abs(v) >= 1000 ? v.toExponential(0) : String(+v.toPrecision(3)); }

function legend(id, series) {
  const box = document.getElementById(id);
  box.replaceChildren(...series.map(s => {
    const span = el("span");
    const mark = el("i");
    mark.style.background = s.color;
    if (s.dash) mark.style.background = `repeating-linear-gradient(90deg, ${s.color} 0 5px, transparent 5px 8px)`;
    span.append(mark, s.label);
    return span;
  }));
}

function render(v) {
  document.title = `${v.title} — gpufec dashboard`;
  show("title", `gpufec run: ${v.title}`);
  const about = document.getElementById("about");
  if (about.childElementCount !== (v.about || []).length) about.replaceChildren(...(v.about || []).map(l => el("li", {}, l)));
  show("elapsed", fixed(v.elapsed_s, 1), v.elapsed_s);
  show("samples", String(v.samples), v.samples);
  const probes = v.probes || [], bers = v.ber || [], decoders = v.decoders || [];
  const probe = probes[0];
  show("mbps", probe ? fixed(probe.mbps, 2) : "n/a", probe ? probe.mbps : null);
  show("probe-name", probe ? `probe '${probe.name}'` : "no probe");
  const b = bers[0];
  show("bits", b ? count(b.bits) : "n/a", b ? b.bits : null);
  show("errors", b ? count(b.bit_errors) : "n/a", b ? b.bit_errors : null);
  const r = b ? b.rates : [null, null, null, null, null, null];
  ["ber", "ber-low", "ber-high", "fer", "fer-low", "fer-high"].forEach((id, i) => show(id, sci(r[i]), r[i]));
  show("frames", b ? count(b.frames) : "n/a", b ? b.frames : null);
  show("frame-errors", b ? count(b.frame_errors) : "n/a", b ? b.frame_errors : null);
  const d = decoders[0];
  show("iterations", d && d.mean_iterations !== null ? fixed(d.mean_iterations, 2) : "n/a", d ? d.mean_iterations : null);
  show("in-flight", d ? String(d.in_flight) : "n/a", d ? d.in_flight : null);
  show("gpu-share", d && d.gpu_share_pct !== null ? fixed(d.gpu_share_pct, 1) + " %" : "n/a", d ? d.gpu_share_pct : null);

  const tp = probes.map((p, i) => ({ label: `probe '${p.name}' (Mb/s)`, color: COLORS[i % COLORS.length], points: p.series }));
  chart(document.getElementById("chart-throughput"), tp, false, "Mb/s");
  legend("legend-throughput", tp);
  const rates = [];
  bers.forEach((s, i) => {
    const color = COLORS[i % COLORS.length];
    rates.push({ label: `BER '${s.name}'`, color, points: s.series.map(p => [p[0], p[1][0]]), band: s.series.map(p => [p[0], p[1][1], p[1][2]]) });
    rates.push({ label: `FER '${s.name}'`, color: COLORS[(i + 1) % COLORS.length], dash: [6, 4], points: s.series.map(p => [p[0], p[1][3]]), band: s.series.map(p => [p[0], p[1][4], p[1][5]]) });
  });
  chart(document.getElementById("chart-ber"), rates, true, "error rate");
  legend("legend-ber", rates);

  const busiest = Math.max(...(v.blocks || []).map(x => x.share_pct || 0));
  document.getElementById("blocks").replaceChildren(...(v.blocks || []).map(x => {
    const row = el("tr", { id: `block-${x.name}` });
    if (x.share_pct !== null && x.share_pct === busiest) row.className = "pace";
    const name = el("td", { class: "name" });
    name.append(x.name + " ", el("small", {}, x.type));
    const bar = el("td");
    const fill = el("div", { class: "bar" });
    fill.style.width = `${x.share_pct || 0}%`;
    bar.append(fill);
    const pct = el("td", { class: "pct", "data-value": x.share_pct === null ? "" : String(x.share_pct) },
      x.share_pct === null ? "wire" : fixed(x.share_pct, 1) + " %");
    row.append(name, bar, pct);
    return row;
  }));
  document.getElementById("decoders").replaceChildren(...decoders.map(x => {
    const row = el("tr", { id: `decoder-${x.name}` });
    for (const t of [x.name, x.backend, count(x.units), count(x.bits), count(x.batches), String(x.in_flight),
                     x.gpu_share_pct === null ? "n/a" : fixed(x.gpu_share_pct, 1) + " %",
                     x.mean_iterations === null ? "n/a" : fixed(x.mean_iterations, 2),
                     x.checked ? `${count(x.failed)} of ${count(x.checked)}` : "n/a"]) row.append(el("td", {}, t));
    return row;
  }));
}

function state(s, text) {
  const e = document.getElementById("state");
  e.dataset.state = s;
  e.textContent = text;
}

async function poll() {
  try {
    const answer = await fetch("/api/dashboard", { cache: "no-store" });
    if (!answer.ok) throw new Error(answer.status);
    const v = await answer.json();
    render(v);
    state("running", "running");
  } catch (e) {
    // The server goes with the run: the last values stay on the page.
    state("ended", "run ended (no answer)");
  }
  setTimeout(poll, POLL_MS);
}

poll();
