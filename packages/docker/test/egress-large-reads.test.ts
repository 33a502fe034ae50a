import { once } from "node:events";
import { connect, createServer, type AddressInfo } from "node:net";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { largeReadBudgetUsed, largeReads } from "../src/egress/large-reads.js";

describe("the allowlist proxy's upstream reads", () => {
  it("take buffers only when data arrives, 1 MiB each within a 64 MiB process budget, then 64 KiB; disposing returns them", () => {
    const before = largeReadBudgetUsed();
    const connections = Array.from({ length: 100 }, () => largeReads());
    // Idle connections hold nothing.
    expect(largeReadBudgetUsed()).toBe(before);
    const sizes = connections.map((reads) => (reads.onread.buffer as () => Uint8Array)().byteLength);
    const large = sizes.filter((size) => size === 1024 * 1024).length;
    expect(large).toBe(64 - before / (1024 * 1024));
    expect(sizes.filter((size) => size === 64 * 1024).length).toBe(100 - large);
    expect(largeReadBudgetUsed()).toBe(64 * 1024 * 1024 + (100 - large) * 64 * 1024);
    for (const reads of connections) reads.dispose();
    expect(largeReadBudgetUsed()).toBe(before);
  });

  it("deliver every byte in order, including what arrived before the target was ready", async () => {
    const payload = Buffer.alloc(8 * 1024 * 1024);
    for (let index = 0; index < payload.byteLength; index += 4) payload.writeUInt32BE(index, index);
    const server = createServer((socket) => socket.end(payload));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    try {
      const reads = largeReads();
      const socket = connect({ host: "127.0.0.1", port: (server.address() as AddressInfo).port, onread: reads.onread });
      await once(socket, "connect");
      await new Promise((resolve) => setTimeout(resolve, 50));
      // A slow target (small buffer) forces backpressure.
      const target = new PassThrough({ highWaterMark: 16 * 1024 });
      const received: Buffer[] = [];
      target.on("data", (chunk: Buffer) => received.push(Buffer.from(chunk)));
      socket.once("end", () => target.end());
      reads.pipeTo(socket, target);
      await once(target, "end");
      socket.destroy();
      reads.dispose();
      expect(Buffer.concat(received).equals(payload)).toBe(true);
    } finally {
      server.close();
    }
  });
});
