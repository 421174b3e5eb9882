// appender() and subscribe({ ack }): options, methods and error types.
import { appender, subscribe, ErrorCode, type Appender, type AppendError, type AppenderOptions } from "tidings";

const options: AppenderOptions = {
  contentType: "application/json",
  producerId: "order-service-1",
  epoch: 3,
  autoClaim: true,
  maxBatch: 100,
  maxBatchBytes: 65536,
  backoff: { floorMs: 100 },
};
export async function write(url: string): Promise<number> {
  const out: Appender = appender(url, options);
  await out.append({ a: 1 });
  await out.append([1, 2]);
  try {
    await out.close();
  } catch (e) {
    const err = e as AppendError;
    if (err.code === ErrorCode.StaleEpoch) return err.epoch ?? -1;
    if (err.code === ErrorCode.SequenceGap) return err.expectedSeq ?? -1;
  }
  const id: string = out.producerId;
  void id;
  return out.epoch;
}
// @ts-expect-error: epoch is a number
export const bad: AppenderOptions = { epoch: "1" };
export const acked = subscribe("/sse", { ack: { url: "/ack", batchMs: 500, maxBatch: 50 } });
// @ts-expect-error: ack needs a url
export const noUrl = subscribe("/sse", { ack: { batchMs: 500 } });
