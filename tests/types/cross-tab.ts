// Type tests of the `crossTab` option (BC-20): a boolean, optional, alongside the others.
import { subscribe, type Options } from "tidings";

export const shared: Options = { crossTab: true, events: ["price"], pauseWhenHidden: true };
export const notShared: Options = { crossTab: false };
export const sub = subscribe("/sse", { crossTab: true, parse: "json" });

// @ts-expect-error crossTab is a boolean
export const wrong: Options = { crossTab: "yes" };
