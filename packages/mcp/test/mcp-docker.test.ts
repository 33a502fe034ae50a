import { createSandboxProvider, listSandboxes } from "@sbx/docker";
import { describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { AUDIT_RESOURCE_URI, serveHttp } from "../src/index.js";
import { connectClient, TRANSPORTS } from "./mcp-clients.js";

const IMAGE = process.env.SBX_DOCKER_IMAGE ?? "sbx-test/python:3.11";
const required = (process.env.SBX_REQUIRE ?? "")
  .split(",")
  .map((name) => name.trim())
  .includes("docker");
const status = await createSandboxProvider({ image: IMAGE }).detect();
if (!status.usable) {
  const message = `Docker is not usable here: ${status.reason} ${status.remedy}`;
  if (required) throw new Error(`SBX_REQUIRE names docker, but ${message}`);
  console.warn(`\n[sbx] SKIPPING the MCP server's Docker tests: ${message}\n`);
}

describe.skipIf(!status.usable).each(TRANSPORTS)("the sbx MCP server over %s, on Docker", (kind) => {
  it("runs tools in a container with no network, and removes the container when the session ends", async () => {
    const connection = await connectClient(kind, { target: `docker://${IMAGE}`, sandboxOptions: { metadata: { test: "sbx-mcp-docker" } } });
    let sandboxId = "";
    try {
      const created = (await connection.call("sandbox_create")).structuredContent as { id: string; backend: string };
      sandboxId = created.id;
      expect(created.backend).toBe("docker");
      const identity = await connection.call("run_command", {
        command: "id -u; python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", 9), 1)' 2>&1 | tail -1",
      });
      expect((identity.structuredContent as { stdout: string }).stdout).toMatch(/^10001\n.*(ConnectionRefusedError|OSError)/s);
      await connection.call("write_file", { path: "data.txt", content: "from mcp" });
      expect((await connection.call("run_code", { code: "print(open('data.txt').read().upper())" })).structuredContent).toMatchObject({
        stdout: "FROM MCP\n",
        results: [],
      });
      // Docker has code contexts through the sbx sandbox agent: state persists across run_code calls in one.
      const context = (await connection.call("create_code_context")).structuredContent as { contextId: string };
      expect(typeof context.contextId).toBe("string");
      await connection.call("run_code", { code: "counter = 41", contextId: context.contextId });
      expect((await connection.call("run_code", { code: "counter + 1", contextId: context.contextId })).structuredContent).toMatchObject({
        results: [{ text: "42" }],
      });
      const audit = JSON.parse(((await connection.client.readResource({ uri: AUDIT_RESOURCE_URI })).contents[0] as { text: string }).text);
      expect(audit.policies.network.applied).toEqual({ egress: "deny", networkMode: "none" });
      expect(audit.isolating).toBe(true);
      expect((await listSandboxes()).some((sandbox) => sandbox.id === sandboxId)).toBe(true);
    } finally {
      await connection.close();
    }
    let remaining = true;
    for (let attempt = 0; attempt < 100 && remaining; attempt += 1) {
      remaining = (await listSandboxes()).some((sandbox) => sandbox.id === sandboxId && sandbox.state === "running");
      if (remaining) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(remaining).toBe(false);
  });
});

describe.skipIf(!status.usable)("the sbx MCP server over HTTP, on Docker: idle sessions", () => {
  it("a client that ran a command and went away without DELETE: its session expires and its container is removed", async () => {
    const server = await serveHttp({
      target: `docker://${IMAGE}`,
      sessionIdleTimeoutMs: 2000,
      sandboxOptions: { metadata: { test: "sbx-mcp-docker-idle" } },
    });
    let sandboxId = "";
    try {
      const client = new Client({ name: "gone", version: "1" });
      await client.connect(new StreamableHTTPClientTransport(server.url));
      sandboxId = ((await client.callTool({ name: "sandbox_create", arguments: {} })).structuredContent as { id: string }).id;
      expect((await client.callTool({ name: "run_command", arguments: { command: "echo hi" } })).structuredContent).toMatchObject({
        exitCode: 0,
        stdout: "hi\n",
      });
      expect((await listSandboxes()).some((sandbox) => sandbox.id === sandboxId && sandbox.state === "running")).toBe(true);
      await client.close(); // Goes away without ending its session.
      let remaining = true;
      for (let attempt = 0; attempt < 150 && remaining; attempt += 1) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        remaining = (await listSandboxes()).some((sandbox) => sandbox.id === sandboxId);
      }
      expect(remaining).toBe(false);
      expect(server.sessionCount).toBe(0);
    } finally {
      await server.close();
    }
  });
});
