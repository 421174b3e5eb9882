// The message objects of a batch of deliveries, built on the JS side from one
// wasm→JS crossing (issue 19): `text` holds every message's id, lastEventId,
// event and data back to back, `lens` their lengths in UTF-16 code units, four
// per message. A data length of 0xFFFFFFFF means "the data is datas[i]" (the
// browser's own EventSource string, or bytes): it never crossed into wasm and
// back. With `json`, string data is JSON.parse'd; a message whose data is not
// JSON is `undefined` in the result (wasm turns it into a `parse` error).
// The object's shape is the API contract's (README): no decision is made here.
export function messages(text, lens, datas, json, transport) {
  const n = lens.length >> 2, out = new Array(n);
  for (let i = 0, at = 0, k = 0; i < n; i++) {
    const id = text.slice(at, (at += lens[k++]));
    const lastEventId = text.slice(at, (at += lens[k++]));
    const event = text.slice(at, (at += lens[k++]));
    const len = lens[k++];
    let data = len === 0xffffffff ? datas[i] : text.slice(at, (at += len));
    if (json && typeof data == "string") {
      try {
        data = JSON.parse(data);
      } catch {
        continue;
      }
    }
    out[i] = { type: event, id, lastEventId, event, data, transport };
  }
  return out;
}
