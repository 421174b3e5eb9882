// The React hook's types (js/react.d.ts): data as the latest message's or a reducer's state.
import { useSubscription, type SubscriptionView } from "tidings/react";
import { useSubscription as useReceived } from "tidings/receive/react";
import type { Status, Subscription } from "tidings";

type Price = { symbol: string; value: number };
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const assert = <T extends true>(_: T) => {};

export function Component(url: string | null) {
  // No options: the latest message's data as sent (a string).
  const plain = useSubscription(url);
  assert<Equal<typeof plain.data, string | undefined>>(true);
  assert<Equal<typeof plain.status, Status>>(true);
  const code: string | undefined = plain.error?.code;

  // parse: "json" with an event map: the data of any message it delivers.
  const json = useSubscription<{ price: Price }>("/updates", { events: ["price"], parse: "json" });
  assert<Equal<typeof json.data, unknown>>(true);
  assert<Equal<typeof json.subscription, Subscription<{ price: Price }, unknown> | undefined>>(true);

  // A reducer: data is its state, typed from `initial`; the message is typed by the map.
  const prices = useSubscription<{ price: Price }, Price[]>("/updates", {
    events: ["price"], parse: "json", initial: [],
    reducer: (all, m) => (m.event === "price" ? [...all, m.data] : all),
  });
  assert<Equal<typeof prices.data, Price[]>>(true);
  const count = useSubscription("/updates", { reducer: (n: number, m) => n + m.data.length, initial: 0 });
  assert<Equal<typeof count.data, number>>(true);
  const view: SubscriptionView<number> = count;

  // The receive-only entry's hook has the same types.
  const received = useReceived("/updates", { parse: "json", initial: null });
  assert<Equal<typeof received.data, unknown>>(true);

  // @ts-expect-error: a reducer needs its initial state
  useSubscription("/updates", { reducer: (n: number) => n + 1 });
  // @ts-expect-error: without parse: "json" the reducer receives string data
  useSubscription("/updates", { reducer: (n: number, m: { data: number }) => n + m.data, initial: 0 });
  // @ts-expect-error: subscribe's options are checked as for subscribe
  useSubscription("/updates", { transports: ["websocket"] });
  // @ts-expect-error: a URL is a string, a URL object, null or undefined
  useSubscription(42);
  return [code, view, prices.data.length] as const;
}
