import { Sandbox } from "@e2b/code-interpreter";
import { afterAll, beforeAll } from "vitest";
import { startE2BEmulator, type E2BEmulator, type E2BEmulatorOptions } from "../src/index.js";
import { testImage } from "./docker-availability.js";

/**
 * Starts one emulator on the test image for the enclosing describe block (beforeAll) and stops it afterwards
 * (afterAll). Returns an accessor: call it inside hooks and tests.
 */
export function emulatorForSuite(options: Omit<E2BEmulatorOptions, "image"> = {}): () => E2BEmulator {
  let emulator: E2BEmulator | undefined;
  beforeAll(async () => {
    emulator = await startE2BEmulator({ image: testImage, ...options });
  });
  afterAll(async () => {
    await emulator?.stop();
  });
  return () => {
    if (!emulator) throw new Error("the E2B emulator did not start (see the beforeAll error)");
    return emulator;
  };
}

/**
 * One emulator and one `@e2b/code-interpreter` sandbox in it for the enclosing describe block; the sandbox is killed
 * before the emulator stops. Returns accessors: call them inside hooks and tests.
 */
export function codeInterpreterForSuite(): { emulator: () => E2BEmulator; sandbox: () => Sandbox } {
  const emulator = emulatorForSuite();
  let sandbox: Sandbox | undefined;
  beforeAll(async () => {
    sandbox = await Sandbox.create(emulator().connectionOptions);
  });
  afterAll(async () => {
    await sandbox?.kill();
  });
  return {
    emulator,
    sandbox: () => {
      if (!sandbox) throw new Error("the code interpreter sandbox was not created (see the beforeAll error)");
      return sandbox;
    },
  };
}
