// A timeline of every request and wait, drawn from the entries of the
// `debug` option given a function: `subscribe(url, { debug: tl.debug() })`.
// One row per transport; each request a bar from its `open` to its end
// (coloured by outcome, labelled with its status and message count); each
// wait a dashed gap labelled with its reason; hidden and offline periods
// shaded; transport switches marked. Plain SVG, no dependency: an app can
// copy it into its own dev tools.
//
// A request ends at the first of: `end` (its body is all in: 304, delivered
// or an empty hold by its `head` status and `deliver` count), `abort`, an
// `error` that retries or is fatal, a `statechange` away from it. `wait`
// entries (the one timer) are not drawn: the `statechange` that starts a
// wait says why and for how long.

const SVG = "http://www.w3.org/2000/svg";
const ROWS = ["eventsource", "fetch-sse", "long-poll", "poll"];
const LABEL_W = 90;
const ROW_H = 34;
const TOP = 18;
export const OUTCOMES = {
  open: "#9bd3a8", delivered: "#2e9d57", 304: "#5b8fd6", empty: "#b9b9b9", error: "#d8443a", aborted: "#ee9a2f",
};
const SHADES = { hidden: "#7a6fd0", offline: "#c0504d" };

function el(tag, attrs = {}, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text != null) e.textContent = text;
  return e;
}

const secs = (ms) => (ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`);

/** Why a wait: its reason, with the attempt number of a backoff. */
function gapLabel(reason, delayMs, backoffs) {
  const wait = delayMs != null ? ` ${secs(delayMs)}` : "";
  switch (reason) {
    case "backoff": return `backoff #${backoffs}${wait}`;
    case "retry-after": return `Retry-After${wait}`;
    case "rate-limit": return `RateLimit-Reset${wait}`;
    case "server-hint": return `server interval${wait}`;
    case "breaker-open": return `breaker open${wait}`;
    case "buffered-stream": return `buffering probe${wait}`;
    default: return `${reason}${wait}`;
  }
}

/**
 * A timeline drawn into `root` (an element; its content is replaced).
 * `windowMs`: how much of the recent past is shown (default 60 s).
 * Returns `{ debug(), draw() }`: `debug()` makes the function to pass as
 * the `debug` option of one subscription (attempt numbers are per
 * connection); `draw()` redraws (open bars grow; it runs on each entry and
 * every 250 ms).
 */
export function timeline(root, { windowMs = 60000 } = {}) {
  const t0 = performance.now();
  const requests = [];
  const gaps = [];
  const shades = [];
  const marks = [];
  const svg = el("svg", { class: "tl", width: "100%" });
  root.replaceChildren(svg, legend());

  function debug() {
    const byAttempt = new Map();
    let last = null;
    let transport = null;
    let gap = null;
    let backoffs = 0;
    const open = {};
    const finish = (r, t, outcome) => {
      if (!r || r.end != null) return;
      r.end = t;
      r.outcome = outcome ?? (r.status === 304 ? "304" : r.messages > 0 ? "delivered" : "empty");
    };
    const endGap = (t) => { if (gap) gap.end = t; gap = null; };
    const shade = (kind, on, t) => {
      if (on && !open[kind]) shades.push(open[kind] = { kind, start: t, end: null });
      if (!on && open[kind]) { open[kind].end = t; open[kind] = null; }
    };
    const handle = {
      open(d, t) {
        finish(last, t, "aborted");
        endGap(t);
        transport = d.transport;
        last = { attempt: d.attempt, transport, start: t, end: null, status: null, messages: 0, outcome: null };
        byAttempt.set(d.attempt, last);
        requests.push(last);
      },
      head(d) { const r = byAttempt.get(d.attempt); if (r) r.status = d.status; },
      end(d, t) { finish(byAttempt.get(d.attempt), t); },
      deliver() { if (last) last.messages++; },
      abort(d, t) { finish(byAttempt.get(d.attempt), t, "aborted"); },
      error(d, t) {
        if (d.retryInMs == null && !d.fatal) return; // a skipped message, a parse error: the request goes on
        if (last && last.end == null && d.status != null) last.status = d.status;
        finish(last, t, "error");
      },
      transportchange(d, t) {
        marks.push({ t, short: `→ ${d.transport}`, label: `${d.previous ?? "start"} → ${d.transport} (${d.reason})` });
        transport = d.transport;
      },
      statechange(d, t) {
        if (d.reason === "hidden" || d.reason === "frozen") shade("hidden", true, t);
        if (d.reason === "visible" || d.reason === "resumed") shade("hidden", false, t);
        if (d.reason === "offline") shade("offline", true, t);
        if (d.reason === "online") shade("offline", false, t);
        if (d.state === "open") backoffs = 0;
        if (d.state === "waiting" || d.state === "paused" || d.state === "closed") {
          finish(last, t, d.state === "waiting" ? undefined : "aborted");
          endGap(t);
        }
        if (d.state === "waiting" || d.state === "paused") {
          if (d.reason === "backoff") backoffs++;
          gap = { transport, start: t, end: null, reason: d.reason, label: gapLabel(d.reason, d.delayMs, backoffs) };
          gaps.push(gap);
        }
      },
    };
    return (what, details) => {
      handle[what]?.(details ?? {}, performance.now() - t0);
      draw();
    };
  }

  function draw() {
    const now = performance.now() - t0;
    const width = Math.max(400, svg.clientWidth || root.clientWidth || 800);
    const from = Math.max(0, now - windowMs);
    const span = Math.max(5000, now - from);
    const x = (t) => LABEL_W + ((Math.max(t, from) - from) / span) * (width - LABEL_W - 8);
    const seen = (item) => (item.end ?? now) >= from;
    const y = (transport) => TOP + Math.max(0, ROWS.indexOf(transport)) * ROW_H;
    const height = TOP + ROWS.length * ROW_H + 4;
    svg.setAttribute("height", height);
    svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
    const out = [];
    for (const [i, name] of ROWS.entries()) {
      out.push(el("line", { x1: LABEL_W, x2: width, y1: TOP + i * ROW_H + ROW_H / 2, y2: TOP + i * ROW_H + ROW_H / 2, stroke: "#eee" }));
      out.push(el("text", { x: 0, y: TOP + i * ROW_H + ROW_H / 2 + 4, class: "tl-row", "font-size": 12, fill: "#555" }, name));
    }
    for (let s = Math.ceil(from / 5000) * 5000; s <= now; s += 5000) {
      out.push(el("line", { x1: x(s), x2: x(s), y1: TOP - 4, y2: height, stroke: "#f0f0f0" }));
      out.push(el("text", { x: x(s) + 2, y: 11, "font-size": 10, fill: "#999" }, `${s / 1000} s`));
    }
    for (const s of shades.filter(seen)) {
      const r = el("rect", { class: `tl-shade tl-${s.kind}`, "data-kind": s.kind, x: x(s.start), y: TOP,
        width: Math.max(2, x(s.end ?? now) - x(s.start)), height: ROWS.length * ROW_H, fill: SHADES[s.kind], "fill-opacity": 0.12 });
      r.append(el("title", {}, `${s.kind} ${secs((s.end ?? now) - s.start)}`));
      out.push(r);
    }
    for (const g of gaps.filter(seen)) {
      const mid = y(g.transport) + ROW_H / 2;
      const grp = el("g", { class: "tl-gap", "data-reason": g.reason });
      grp.append(el("line", { x1: x(g.start), x2: x(g.end ?? now), y1: mid, y2: mid, stroke: "#777", "stroke-dasharray": "3 3" }),
        el("text", { x: x(g.start) + 2, y: mid - 5, "font-size": 10, fill: "#333" }, g.label));
      out.push(grp);
    }
    for (const r of requests.filter(seen)) {
      const outcome = r.outcome ?? "open";
      const label = `${r.status ?? ""}${r.status != null ? " · " : ""}${r.messages} msg`;
      const grp = el("g", { class: `tl-req tl-${outcome}`, "data-outcome": outcome, "data-attempt": r.attempt });
      const top = y(r.transport) + 9;
      grp.append(el("rect", { x: x(r.start), y: top, width: Math.max(3, x(r.end ?? now) - x(r.start)), height: ROW_H - 18, rx: 3, fill: OUTCOMES[outcome] }),
        el("text", { x: x(r.start) + 3, y: top + ROW_H - 18 + 10, "font-size": 10, fill: "#222" }, label),
        el("title", {}, `attempt ${r.attempt} on ${r.transport}: ${outcome}, ${label}, ${secs((r.end ?? now) - r.start)}`));
      out.push(grp);
    }
    for (const [i, m] of marks.entries()) {
      if (m.t < from) continue;
      const grp = el("g", { class: "tl-switch" });
      grp.append(el("line", { x1: x(m.t), x2: x(m.t), y1: TOP - 2, y2: height, stroke: "#333", "stroke-width": 1.5 }),
        el("text", { x: x(m.t) + 2, y: TOP + 8 + (i % 2) * 10, "font-size": 9, fill: "#333" }, m.short),
        el("title", {}, m.label));
      out.push(grp);
    }
    svg.replaceChildren(...out);
  }

  setInterval(draw, 250);
  draw();
  return { debug, draw };
}

function legend() {
  const p = document.createElement("p");
  p.className = "tl-legend";
  const items = [...Object.entries(OUTCOMES).map(([k, c]) => [k === "open" ? "in flight" : k === "empty" ? "empty hold" : k, c, 1]),
    ...Object.entries(SHADES).map(([k, c]) => [k, c, 0.25])];
  for (const [name, colour, opacity] of items) {
    const s = document.createElement("span");
    const sw = document.createElement("i");
    sw.style.cssText = `display:inline-block;width:.8em;height:.8em;margin:0 .3em 0 .8em;background:${colour};opacity:${opacity}`;
    s.append(sw, name);
    p.append(s);
  }
  p.append(" · dashed: a wait, with its reason · vertical line: a transport switch");
  return p;
}
