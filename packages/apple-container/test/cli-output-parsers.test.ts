import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { isSupportedVersion, parseContainers, parseServiceStatus, parseVersionLine } from "../src/index.js";
import { describe, expect, it } from "vitest";
import { parseServiceStatusTable } from "../src/container-output.js";
import { mapAppleContainerError } from "../src/map-apple-container-error.js";

/** A recorded output (test/fixtures/README.md says where each comes from). */
function fixture(name: string): string {
  return readFileSync(fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url)), "utf8");
}

describe("container --version", () => {
  it("reads 1.2.2 and 1.4.1, both in the tested range", () => {
    expect(parseVersionLine(fixture("version-1.2.2.txt"))).toEqual({
      version: "1.2.2",
      major: 1,
      minor: 2,
      patch: 2,
      build: "release",
      commit: "0190097",
    });
    const newest = parseVersionLine(fixture("version-1.4.1.txt"))!;
    expect(newest.version).toBe("1.4.1");
    expect(isSupportedVersion(newest)).toBe(true);
  });

  it("reads 1.5.0 and 0.12.0 as outside the range, and refuses a line that is not the CLI's", () => {
    expect(isSupportedVersion(parseVersionLine(fixture("version-1.5.0.txt"))!)).toBe(false);
    expect(isSupportedVersion(parseVersionLine("container CLI version 0.12.3 (build: release, commit: 1234567)")!)).toBe(false);
    expect(parseVersionLine("Docker version 28.2.2, build e6534b4")).toBeUndefined();
  });
});

describe("container system status", () => {
  it("reads the flat 1.2.2 shape, running and not running", () => {
    expect(parseServiceStatus(fixture("system-status-1.2.2-running.json"))).toEqual({ status: "running", serverVersion: "1.2.2", shape: "flat" });
    expect(parseServiceStatus(fixture("system-status-1.2.2-not-running.json"))).toEqual({
      status: "not running",
      serverVersion: undefined,
      shape: "flat",
    });
  });

  it("reads the nested 1.4.1 shape (captured), running and unregistered", () => {
    expect(parseServiceStatus(fixture("system-status-1.4.1-running.json"))).toEqual({ status: "running", serverVersion: "1.4.1", shape: "nested" });
    expect(parseServiceStatus(fixture("system-status-1.4.1-unregistered.json"))).toEqual({
      status: "unregistered",
      serverVersion: undefined,
      shape: "flat",
    });
  });

  it("reads the table form (captured on 1.4.1) for a release without --format", () => {
    expect(parseServiceStatusTable(fixture("system-status-1.4.1-table.txt"))).toEqual({ status: "running", serverVersion: "1.4.1", shape: "table" });
    expect(parseServiceStatusTable(fixture("system-status-1.4.1-unregistered-table.txt"))?.status).toBe("unregistered");
    expect(parseServiceStatus("not json")).toBeUndefined();
  });
});

describe("container inspect / ls --format json", () => {
  it("reads 1.2.2's pretty inspect with escaped slashes", () => {
    const [record] = parseContainers(fixture("inspect-1.2.2-running.json"))!;
    expect(record).toMatchObject({
      id: "sbx-abc",
      state: "running",
      attachedNetworks: 0,
      configuredNetworks: [],
      cpus: 2,
      memoryInBytes: 1073741824,
    });
    expect(record!.image).toBe("docker.io/library/alpine:3.20");
    expect(record!.mounts[0]).toEqual({ type: "virtiofs", source: "/Users/me/wt", destination: "/workspace", options: [] });
    expect(record!.labels["dev.sbx.managed"]).toBe("true");
  });

  it("reads 1.4.1's compact ls with unescaped slashes and added keys; a stopped container has no exit code", () => {
    const records = parseContainers(fixture("ls-1.4.1.json"))!;
    expect(records.map((record) => [record.id, record.state, record.attachedNetworks])).toEqual([
      ["sbx-nat", "running", 1],
      ["sbx-done", "stopped", 0],
    ]);
    expect(records[0]!.configuredNetworks).toEqual(["default"]);
    expect(records[0]!.mounts[0]!.options).toEqual(["ro"]);
    expect(Object.keys(records[1]!)).not.toContain("exitCode");
  });

  it("reads the 0.x shape (state a top-level string) and refuses what is not an array of containers", () => {
    expect(parseContainers(fixture("ls-0.12.json"))![0]).toMatchObject({ id: "old", state: "running" });
    expect(parseContainers('{"id":"x"}')).toBeUndefined();
    expect(parseContainers("")).toBeUndefined();
  });
});

describe("mapAppleContainerError", () => {
  const failed = (stderr: string, exitCode = 1) => ({ exitCode, stdout: "", stderr, stopped: false });

  it("maps the service-down text to BackendUnavailableError naming `container system start`", () => {
    const error = mapAppleContainerError(
      failed(
        'Error: interrupted: "XPC connection error: Connection invalid"\nEnsure container system service has been started with `container system start`.',
      ),
      { operation: "create a sandbox" },
    );
    expect(error.code).toBe("SBX_BACKEND_UNAVAILABLE");
    expect((error as unknown as { remedy: string }).remedy).toContain("container system start");
  });

  it("maps a missing container (captured text) to SandboxNotFoundError, a timeout to TimeoutError, exit 64 to ProviderError", () => {
    expect(mapAppleContainerError(failed(fixture("inspect-missing-1.4.1.txt")), { operation: "inspect", sandboxId: "sbx-gone" }).code).toBe(
      "SBX_SANDBOX_NOT_FOUND",
    );
    expect(mapAppleContainerError({ exitCode: null, stdout: "", stderr: "", stopped: true }, { operation: "inspect", timeoutMs: 5 }).code).toBe(
      "SBX_TIMEOUT",
    );
    const usage = mapAppleContainerError(failed("Error: Unknown option '--no-dns'", 64), { operation: "create a sandbox" });
    expect([usage.code, usage.retryable]).toEqual(["SBX_PROVIDER", false]);
    expect(
      mapAppleContainerError(failed('Error: invalidArgument: "minimum memory amount allowed is 200 MiB (got 104857600 bytes)"'), {
        operation: "create a sandbox",
      }).code,
    ).toBe("SBX_INVALID_ARGUMENT");
  });
});
