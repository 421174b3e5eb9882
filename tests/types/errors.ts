// ErrorCode: a frozen const and a type of the same name.
import { ErrorCode, subscribe, type TidingsError } from "tidings";

const code: ErrorCode = ErrorCode.NetworkOrCors;
export const all: ErrorCode[] = Object.values(ErrorCode);
// @ts-expect-error: not an error code
export const bad: ErrorCode = "network";
// @ts-expect-error: frozen
ErrorCode.Auth = "auth";
export function onError(e: TidingsError) {
  switch (e.code) {
    case ErrorCode.InvalidUrl: case ErrorCode.HttpStatus: case ErrorCode.NoContent:
    case ErrorCode.BadContentType: case ErrorCode.NetworkOrCors: case ErrorCode.Timeout:
    case ErrorCode.TooLarge: case ErrorCode.Parse: case ErrorCode.Auth: case ErrorCode.GaveUp:
    case ErrorCode.InvalidOption: case ErrorCode.Headers: case ErrorCode.NotInitialized:
    case ErrorCode.ResumeIgnored: case ErrorCode.StaleEpoch: case ErrorCode.SequenceGap:
    case ErrorCode.StreamClosed: case ErrorCode.Conflict:
      return code;
    default: {
      const never: never = e.code; // every code is handled above
      return never;
    }
  }
}
try {
  subscribe("ftp://example.com/");
} catch (e) {
  if ((e as TidingsError).code === ErrorCode.InvalidUrl) void 0;
  if ((e as TidingsError).code === ErrorCode.InvalidOption) void 0;
}
// What a failing `headers` function threw.
export const cause = (e: TidingsError): unknown => e.code === ErrorCode.Headers ? e.cause : undefined;
// Which message a `parse` or `too-large` error dropped.
export const dropped = (e: TidingsError): string | undefined =>
  e.code === ErrorCode.Parse ? `${e.event}#${e.id} ${e.lastEventId}` : e.code === ErrorCode.TooLarge ? e.id : undefined;
