import { spawn } from "node:child_process";
import { once } from "node:events";
import { connect } from "node:net";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { describeWithDocker, docker } from "./docker-test-environment.js";

/** Resolves with "connected" or the connection's error code. */
function tryConnect(url: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => {
      socket.destroy();
      resolve("connected");
    });
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

describeWithDocker("exposed ports and the host process's end (ADR 0053)", () => {
  it("a host process that exposed a port and is SIGKILLed leaves no listener: the URL refuses connections afterwards", async () => {
    const child = spawn(process.execPath, [fileURLToPath(new URL("./fixtures/expose-and-hang.mjs", import.meta.url))], {
      cwd: fileURLToPath(new URL("..", import.meta.url)),
      stdio: ["ignore", "pipe", "inherit"],
    });
    let output = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (text: string) => (output += text));
    while (!output.includes("\n")) {
      if (child.exitCode !== null) throw new Error(`the child exited early with ${child.exitCode}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const exposed = JSON.parse(output) as { url: string; status: number; body: string; id: string };
    expect(exposed).toMatchObject({ status: 200, body: "alive\n" });
    // The port reached the server while the container had no network at all (read from the engine, not sbx's record).
    const container = await docker.getContainer(exposed.id).inspect();
    expect(container.HostConfig.NetworkMode).toBe("none");
    expect(Object.keys(container.NetworkSettings.Networks ?? {})).toEqual([]);
    expect(exposed.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await tryConnect(exposed.url)).toBe("connected");
    child.kill("SIGKILL");
    await once(child, "exit");
    expect(await tryConnect(exposed.url)).toBe("ECONNREFUSED");
  });
});
