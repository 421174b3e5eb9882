// Issue 22: persisted cursor, reconnect(), the calm status.
import { subscribe, type Status, type StatusChangeEvent } from "tidings";

const sub = subscribe("/updates", { persist: "local", persistKey: "feed", lostAfterMs: 3000 });
sub.addEventListener("statuschange", (e: StatusChangeEvent) => {
  const s: Status = e.status;
  if (s === "reconnecting" || s === "offline") void e.reason;
  // @ts-expect-error not a status (the state is a different vocabulary)
  if (e.status === "waiting") void 0;
});
const now: Status = sub.status;
void now;
sub.reconnect();
// @ts-expect-error reconnect() returns nothing
const r: boolean = sub.reconnect();
void r;
subscribe("/u", { persist: "session" });
// @ts-expect-error only "session" or "local"
subscribe("/u", { persist: true });
// @ts-expect-error lostAfterMs is a number of milliseconds
subscribe("/u", { lostAfterMs: "5s" });
sub.addEventListener("statechange", (e) => {
  if (e.reason === "gave-up" || e.reason === "reconnect") void 0;
});
// @ts-expect-error `statuschange` is the subscription's own event, not a message name
subscribe<{ statuschange: string }>("/sse", { events: ["statuschange"] });
