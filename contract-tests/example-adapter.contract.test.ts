import { rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { describeSandboxContract, type NetworkFixture } from "@sbx/contract";
import { createSandboxProvider } from "@sbx/example-adapter";

/**
 * Servers on distinct loopback addresses (127.0.0.1, 127.0.0.2, ...). The example adapter's "deny" puts commands in
 * a new network namespace, where the host's loopback does not exist, so these servers are exactly what deny must
 * block; with "allow" commands share the host's network namespace and reach them.
 */
const loopbackServers: NetworkFixture = {
  async startServers(count) {
    const servers: Server[] = [];
    const started: Array<{ url: string; host: string }> = [];
    for (let index = 0; index < count; index++) {
      const host = `127.0.0.${index + 1}`;
      const server = createServer((_request, response) => {
        response.writeHead(200, { "content-type": "text/plain" });
        response.end("sbx-ok");
      });
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(0, host, () => resolve());
      });
      servers.push(server);
      started.push({ host, url: `http://${host}:${(server.address() as AddressInfo).port}/` });
    }
    return {
      servers: started,
      close: async () => {
        await Promise.all(servers.map((server) => new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        })));
      },
    };
  },
};

describeSandboxContract("example", () => createSandboxProvider(), {
  network: loopbackServers,
  timeoutMs: 90_000,
  // An operator removing the sandbox: its folder under the provider's default root goes away.
  removeOutOfBand: async (sandbox) => rm(join(tmpdir(), "sbx-example", sandbox.id), { recursive: true, force: true }),
  skip: { "lost-sandbox.mid-command": "the example adapter's commands are host processes that outlive their folder: it learns of the loss only when the command ends" },
});
