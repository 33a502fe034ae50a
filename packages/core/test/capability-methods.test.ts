/**
 * A capability flag and its method go together (ADR 0035): core refuses a provider, when it is registered or loaded,
 * whose flag and method disagree, and a driver, when it is made, whose flag and method disagree, naming both.
 */
import { describe, expect, it } from "vitest";
import {
  CapabilityMethodMismatchError,
  connectSandbox,
  createSandbox,
  isSbxError,
  registerProvider,
  UnsupportedSpecificationError,
} from "../src/index.ts";
import { defineCapabilities } from "../src/adapter.ts";
import { CAPABILITY_METHOD_PAIRS } from "../src/v1/capability-methods.ts";
import { caught } from "./support/caught.ts";
import { createMemoryProvider, MEMORY_CAPABILITIES } from "./support/memory-driver.ts";

describe("capability flags and their methods", () => {
  it("the table names every flag↔method pair the protocol documents", () => {
    expect(CAPABILITY_METHOD_PAIRS.map((pair) => `${pair.capability}:${pair.holder}.${pair.method}:${pair.rule}`)).toEqual([
      "RECONNECT:provider.connect:exactly",
      "LIST_SANDBOXES:provider.list:exactly",
      "NAMED_SANDBOXES:provider.getOrCreate:exactly",
      "STATEFUL_CODE:driver.createCodeContext:exactly",
      "STATEFUL_CODE:driver.runCode:flag-needs-method",
      "SET_LIFETIME:driver.setLifetime:flag-needs-method",
      "FILE_WATCH:driver.watchFiles:flag-needs-method",
      "PTY:driver.openTerminal:flag-needs-method",
      "PAUSE:driver.pause:flag-needs-method",
      "PAUSE:driver.resume:flag-needs-method",
      "PORTS:driver.openPortConnection:flag-needs-method",
      "SNAPSHOTS:driver.snapshot:flag-needs-method",
      "SNAPSHOTS:provider.listSnapshots:exactly",
      "SNAPSHOTS:provider.deleteSnapshot:exactly",
    ]);
  });

  it("RECONNECT without connect: registerProvider refuses it, naming RECONNECT and connect", async () => {
    const provider = createMemoryProvider({
      backend: "reconnect-no-method",
      capabilities: defineCapabilities({ RECONNECT: true, languages: ["python"] }),
    });
    const error = await caught(() => registerProvider("reconnect-no-method", () => provider));
    expect(error).toBeInstanceOf(CapabilityMethodMismatchError);
    expect(error).toBeInstanceOf(UnsupportedSpecificationError);
    expect(isSbxError(error, "SBX_UNSUPPORTED_SPECIFICATION")).toBe(true);
    expect(error.capability).toBe("RECONNECT");
    expect(error.method).toBe("connect");
    expect(error.holder).toBe("provider");
    expect(error.flagDeclared).toBe(true);
    expect(error.message).toContain("RECONNECT");
    expect(error.message).toContain("connect()");
    // Refused before anything was registered: the scheme is still unknown.
    const unknown = await caught(() => createSandbox("reconnect-no-method://"));
    expect(isSbxError(unknown, "SBX_INVALID_ARGUMENT")).toBe(true);
  });

  it("connect without RECONNECT: createSandbox(provider) refuses it before create() runs", async () => {
    const provider = createMemoryProvider({ backend: "method-no-reconnect", connectable: true });
    const error = await caught(() => createSandbox(provider));
    expect(error).toBeInstanceOf(CapabilityMethodMismatchError);
    expect(error.capability).toBe("RECONNECT");
    expect(error.method).toBe("connect");
    expect(error.flagDeclared).toBe(false);
    expect(provider.drivers.length).toBe(0);
  });

  it("STATEFUL_CODE without createCodeContext: the created driver is refused and destroyed", async () => {
    const provider = createMemoryProvider({
      backend: "stateful-no-contexts",
      capabilities: defineCapabilities({ STATEFUL_CODE: true, languages: ["python"] }),
      driver: { codeChannel: true },
    });
    const error = await caught(() => createSandbox(provider));
    expect(error).toBeInstanceOf(CapabilityMethodMismatchError);
    expect(error.capability).toBe("STATEFUL_CODE");
    expect(error.method).toBe("createCodeContext");
    expect(error.holder).toBe("driver");
    expect(provider.drivers.map((driver) => driver.destroyCalls)).toEqual([1]);
  });

  it("STATEFUL_CODE without runCode: refused, naming runCode", async () => {
    const provider = createMemoryProvider({
      backend: "stateful-no-run",
      capabilities: defineCapabilities({ STATEFUL_CODE: true, languages: ["python"] }),
      driver: { codeContexts: true },
    });
    const error = await caught(() => createSandbox(provider));
    expect(error).toBeInstanceOf(CapabilityMethodMismatchError);
    expect(error.method).toBe("runCode");
    expect(provider.drivers.map((driver) => driver.destroyCalls)).toEqual([1]);
  });

  it("createCodeContext without STATEFUL_CODE: refused on create, and on connect without destroying the attached sandbox", async () => {
    const created = createMemoryProvider({ backend: "contexts-no-flag", driver: { codeContexts: true } });
    const error = await caught(() => createSandbox(created));
    expect(error).toBeInstanceOf(CapabilityMethodMismatchError);
    expect(error.capability).toBe("STATEFUL_CODE");
    expect(error.flagDeclared).toBe(false);
    const connected = createMemoryProvider({
      backend: "contexts-no-flag-connect",
      capabilities: defineCapabilities({ RECONNECT: true, languages: ["python"] }),
      connectable: true,
      driver: { codeContexts: true },
    });
    const connectError = await caught(() => connectSandbox(connected, "sb-7"));
    expect(connectError).toBeInstanceOf(CapabilityMethodMismatchError);
    expect(connected.drivers.map((driver) => driver.destroyCalls)).toEqual([0]);
  });

  it("runCode without STATEFUL_CODE is allowed (the one-shot code channel), and a matching provider loads", async () => {
    const oneShot = await createSandbox(
      createMemoryProvider({ backend: "one-shot-channel", capabilities: MEMORY_CAPABILITIES, driver: { codeChannel: true } }),
    );
    expect(oneShot.backend).toBe("one-shot-channel");
    await oneShot.kill();
    const complete = createMemoryProvider({
      backend: "complete",
      capabilities: defineCapabilities({ STATEFUL_CODE: true, RECONNECT: true, languages: ["python"] }),
      connectable: true,
      driver: { codeChannel: true, codeContexts: true },
    });
    const sandbox = await createSandbox(complete);
    expect(sandbox.capabilities.STATEFUL_CODE).toBe(true);
    await sandbox.kill();
  });
});
