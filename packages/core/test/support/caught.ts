/** Runs `call` and returns the error it threw (sync or async), failing if it did not throw. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read whichever fields the error they expect carries
export async function caught(call: () => unknown): Promise<any> {
  try {
    await call();
  } catch (error) {
    return error;
  }
  throw new Error("expected the call to throw");
}
