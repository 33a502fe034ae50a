/**
 * Waits for `promise` at most `milliseconds`; past that it rejects with an error carrying `message` and code
 * `ETIMEDOUT` (a stalled engine must not hold a caller forever). The promise itself is left to settle on its own.
 */
export function withTimeout<Value>(promise: Promise<Value>, milliseconds: number, message: string): Promise<Value> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(message), { code: "ETIMEDOUT" })), milliseconds);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
