// The JS half of a reporter (report/drive.rs, report/mod.rs).

// `Reporter.stats()`: the machine's counters as one object (index.d.ts
// `ReportStats`), made here from one wasm→JS call.
export const reportStats = (reports, skipped, requests, retries, delivered, superseded, failed, transientFailures, intervalMs) => ({
  reports, skipped, requests, retries, delivered, superseded, failed, transientFailures, intervalMs,
});

// The app's report `task`: the handle's call(n) calls it on a microtask,
// awaits the promise it returns (another value is taken as it is), and
// reports [n, value], or [n, , error] with what it threw or rejected with.
// Nothing is called or reported after the handle's abort().
export function collector(task, report) {
  let alive = 1;
  const call = async (n) => {
    let r;
    try {
      const v = task.call(undefined);
      r = [n, v instanceof Promise ? await v : v];
    } catch (e) {
      r = [n, , e];
    }
    alive && report(r);
  };
  return { call: (n) => queueMicrotask(() => alive && call(n)), abort: () => (alive = 0) };
}
