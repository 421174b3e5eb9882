// report(): options, the Reporter and its events.
import { report, type Reporter, type ReportOptions, type ReportStats } from "tidings";

const o: ReportOptions = {
  headers: { "Content-Type": "application/json" },
  interval: { mode: "fixed", initialMs: 10_000, minMs: 1_000 },
  startupJitterMs: 5_000,
  whenHidden: { intervalMs: 60_000 },
  keepAll: false,
  maxAttempts: Infinity,
  backoff: { floorMs: 500 },
  breaker: { failureThreshold: Infinity, cooldownMs: 30_000 },
};
export const r: Reporter = report("/location", async () => JSON.stringify({ lat: 1 }), o);
export const quiet = report(new URL("https://x/r"), () => undefined, { whenHidden: "continue" });
r.addEventListener("statechange", (e) => void e.state.toUpperCase());
r.addEventListener("error", (e) => void (e.fatal ? e.code : e.retryInMs));
r.flush();
const s: ReportStats = r.stats();
export const n: number = s.delivered + s.superseded + s.intervalMs;
r.stop();
// @ts-expect-error: one fresh key per report
export const bad1: ReportOptions = { idempotencyKey: "k" };
// @ts-expect-error: no such hidden policy
export const bad2: ReportOptions = { whenHidden: "slow" };
// @ts-expect-error: a plain object is not a body (JSON.stringify it)
report("/r", () => ({ lat: 1 }));
// @ts-expect-error: a reporter has no message events
r.addEventListener("message", () => {});
// @ts-expect-error: the breaker's threshold is a number
export const bad3: ReportOptions = { breaker: { failureThreshold: "5" } };
