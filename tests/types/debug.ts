// The `debug` option as a function: each entry narrows by its `what`.
import { subscribe, type DebugEntry, type DebugFn } from "tidings";

const seen: DebugEntry[] = [];
const draw: DebugFn = (what, details) => {
  if (what === "head") {
    const status: number = details.status;
    void status;
  }
  if (what === "statechange") void details.delayMs;
  if (what === "open") {
    const attempt: number = details.attempt;
    void attempt;
    // @ts-expect-error an `open` entry has no status
    void details.status;
  }
};
subscribe("/updates", { debug: draw });
subscribe("/updates", { debug: (...entry) => { seen.push(entry); } });
subscribe("/updates", { debug: true });
// @ts-expect-error debug is a boolean or a function
subscribe("/updates", { debug: "yes" });
