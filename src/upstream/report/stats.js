// `Reporter.stats()`: the machine's counters as one object (index.d.ts
// `ReportStats`), made here from one wasm→JS call.
export const reportStats = (reports, skipped, requests, retries, delivered, superseded, failed, transientFailures, intervalMs) => ({
  reports, skipped, requests, retries, delivered, superseded, failed, transientFailures, intervalMs,
});
