/**
 * `createSandbox({ files })` (ADR 0046) on core alone: the files reach the driver's own `writeFile` before create
 * resolves, adapters never see them in their create options, a refused write destroys the sandbox, and
 * `connectSandbox` refuses them. The contract suite proves the same on every backend from inside the sandbox.
 */
import { describe, expect, it } from "vitest";
import { connectSandbox, createSandbox, InvalidArgumentError, PathError, type SandboxProviderV1 } from "../src/index.ts";
import { caught } from "./support/caught.ts";
import { createMemoryProvider, MEMORY_WORKSPACE } from "./support/memory-driver.ts";

/** A memory provider that also keeps the options each create request carried. */
function recordingProvider() {
  const memory = createMemoryProvider();
  const requests: Array<Record<string, unknown>> = [];
  const provider: SandboxProviderV1 = {
    ...memory,
    create: (request) => {
      requests.push(request.options as unknown as Record<string, unknown>);
      return memory.create(request);
    },
  };
  return { provider, requests, drivers: memory.drivers };
}

describe("createSandbox({ files })", () => {
  it("writes text and bytes, relative and absolute inside the workspace, through the driver before create resolves", async () => {
    const { provider, requests, drivers } = recordingProvider();
    const sandbox = await createSandbox(provider, {
      files: [
        { path: "main.py", content: "print('hi')\n" },
        { path: `${MEMORY_WORKSPACE}/data.bin`, content: new Uint8Array([0, 255]) },
      ],
    });
    try {
      expect(new TextDecoder().decode(drivers[0]!.files.get(`${MEMORY_WORKSPACE}/main.py`))).toBe("print('hi')\n");
      expect([...drivers[0]!.files.get(`${MEMORY_WORKSPACE}/data.bin`)!]).toEqual([0, 255]);
      expect(requests).toHaveLength(1);
      expect(Object.keys(requests[0]!), "the adapter's create options").not.toContain("files");
    } finally {
      await sandbox.kill();
    }
  });

  it("a path out of the workspace is PathError once the sandbox exists, and the sandbox is destroyed before the rejection", async () => {
    const { provider, drivers } = recordingProvider();
    const error = await caught(() =>
      createSandbox(provider, {
        files: [
          { path: "ok.txt", content: "x" },
          { path: "/etc/passwd", content: "x" },
        ],
      }),
    );
    expect(error).toBeInstanceOf(PathError);
    expect((error as PathError).reason).toBe("escapes-workspace");
    expect(drivers).toHaveLength(1);
    expect(drivers[0]!.destroyCalls).toBe(1);
  });

  it("a signal aborted once the sandbox exists stops the writes: AbortedError, the sandbox destroyed, nothing written", async () => {
    const { provider, drivers } = recordingProvider();
    const controller = new AbortController();
    // The signal aborts as the backend answers the create: the writes are next, and must not happen.
    const aborting: SandboxProviderV1 = {
      ...provider,
      create: async (request) => {
        const driver = await provider.create(request);
        controller.abort();
        return driver;
      },
    };
    const error = await caught(() => createSandbox(aborting, { files: [{ path: "a.txt", content: "x" }], signal: controller.signal }));
    expect((error as { code?: string }).code).toBe("SBX_ABORTED");
    expect(drivers[0]!.files.size).toBe(0);
    expect(drivers[0]!.destroyCalls).toBe(1);
  });

  it("connectSandbox refuses files with InvalidArgumentError on options.files", async () => {
    const { provider } = recordingProvider();
    const error = await caught(() => connectSandbox(provider, "memory-1", { files: [{ path: "a.txt", content: "x" }] }));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as InvalidArgumentError).field).toBe("options.files");
  });
});
