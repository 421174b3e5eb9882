// The async iterator and `using` (Symbol.dispose), typed by the event map.
import { subscribe } from "tidings";

type Price = { symbol: string; value: number };
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const assert = <T extends true>(_: T) => {};

export async function prices() {
  const sub = subscribe<{ price: Price; news: string }>("/updates", { events: ["price", "news"], parse: "json" });
  for await (const msg of sub) {
    // A union discriminated by `event`.
    if (msg.event === "price") {
      assert<Equal<typeof msg.data, Price>>(true);
      if (msg.data.value > 100) break;
    } else if (msg.event === "news") {
      assert<Equal<typeof msg.data, string>>(true);
    } else {
      assert<Equal<typeof msg.event, "message">>(true);
      assert<Equal<typeof msg.data, unknown>>(true);
    }
    // @ts-expect-error: data may be unknown (the message case), so no property access
    msg.data.value;
  }
}

export async function text() {
  using sub = subscribe("/sse");
  const it = sub[Symbol.asyncIterator]();
  const first = await it.next();
  if (!first.done) {
    assert<Equal<typeof first.value.data, string>>(true);
    assert<Equal<typeof first.value.event, string>>(true);
  }
  await it.return?.();
}
