// The JS half of the wasm↔JS boundary on the hot path: what is
// cheaper built or taken apart on the JS side than one crossing at a time;
// and two messages for the app that are smaller written in JS than in wasm.
// No decision is made here; the engine makes them all.

// The message objects of a batch of deliveries, built from one wasm→JS
// crossing: `text` holds every message's id, lastEventId, event and data
// back to back, `lens` their lengths in UTF-16 code units, four per message
// and a 0xFFFFFFFE mark after data that is bytes (one char per byte: handed
// out as a Uint8Array). A data length of 0xFFFFFFFF means "the data is
// datas[i]" (the browser's own EventSource string): it never crossed into
// wasm and back. With `json`, string data is JSON.parse'd; a message whose
// data is not JSON is `undefined` in the result (wasm turns it into a
// `parse` error). The object's shape is the API contract's (README).
export function messages(text, lens, datas, json, transport) {
  const out = [];
  for (let i = 0, at = 0, k = 0; k < lens.length; i++) {
    const id = text.slice(at, (at += lens[k++]));
    const lastEventId = text.slice(at, (at += lens[k++]));
    const event = text.slice(at, (at += lens[k++]));
    const len = lens[k++];
    let data = len == 0xffffffff ? datas[i] : text.slice(at, (at += len));
    if (lens[k] == 0xfffffffe) k++, (data = Uint8Array.from(data, (c) => c.charCodeAt(0)));
    else if (json) {
      try {
        data = JSON.parse(data);
      } catch {
        continue; // out[i] stays undefined
      }
    }
    out[i] = { type: event, id, lastEventId, event, data, transport };
  }
  return out;
}

// The `invalid-option` Error: `invalid option: <name>: expected <expected>,
// got <value> (<type>)`; the value a string or an array as JSON, a function
// by its type only, anything else as String(value) (an empty or throwing one
// by its type only), cut after 60 characters.
export function invalidOption(name, expected, got) {
  const t = typeof got;
  let s = "";
  try {
    s = t == "string" || Array.isArray(got) ? JSON.stringify(got) : t == "function" ? "" : String(got);
  } catch {}
  if (s.length > 60) s = s.slice(0, 60) + "…";
  return Object.assign(Error(`invalid option: ${name}: expected ${expected}, got ${s ? `${s} (${t})` : t}`), { code: "invalid-option" });
}

// A listener for `type`, which the subscription never dispatches: the
// console.warn saying how to fix it, and the debug line's details.
export function neverDispatched(type) {
  const message = `"${type}" is not in the events option: its listeners will never run (events: ["${type}"])`;
  console.warn("[tidings]", message);
  return { event: type, message };
}

// One entry of the `debug` log: to the app's function (what it throws is
// reported with `reportError` where the browser has it; the connection goes
// on), else to the console. Smaller here than in wasm.
export function debugLog(to, what, details) {
  if (typeof to != "function") return console.debug("[tidings]", what, details);
  try { to(what, details); } catch (e) { globalThis.reportError?.(e); }
}

// The URL of one attempt, as a promise: what the app's `url` function
// returns or resolves to (a URL object as its href; any other value as given,
// so wasm refuses a non-string; what it throws is the rejection), else `url`
// as given. Wasm checks it as the subscribe URL.
export function attemptUrl(f, attempt, status, cursor, transport, url) {
  return Promise.resolve()
    .then(() => (f ? f({ attempt, status: status ?? null, cursor: cursor || null, transport, url }) : url))
    .then((u) => (u instanceof URL ? u.href : u));
}
