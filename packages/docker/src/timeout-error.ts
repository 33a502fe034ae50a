/**
 * The error a bounded engine call fails with when its time is up (for core's `withinTime`): `message` and code
 * `ETIMEDOUT`, so a stalled engine never holds a caller forever and reads like any other timeout of the engine.
 */
export function timeoutError(message: string): Error {
  return Object.assign(new Error(message), { code: "ETIMEDOUT" });
}
