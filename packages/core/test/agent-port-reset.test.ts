/**
 * The sbx agent's port connection (ADR 0053) against a server that writes and then resets, driven step by step: the
 * agent's own `PortConnection` class runs in host python3 with a recording stand-in for the agent, so the moment the
 * agent first looks at the socket is chosen by the test, not by the scheduler. Linux keeps bytes that arrived before a
 * reset readable; the agent must send every one of them before it reports the reset (a contract run lost them: the
 * client of `ports.hostile-server` got no bytes at all).
 */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { SBX_AGENT_SOURCE } from "../src/agent/agent-source.ts";

const hasPython = spawnSync("python3", ["--version"]).status === 0;

/** The agent's exposed-ports section: from its heading to the agent class. */
const PORT_SECTION = SBX_AGENT_SOURCE.slice(SBX_AGENT_SOURCE.indexOf("# --- exposed ports"), SBX_AGENT_SOURCE.indexOf("class Agent(object):"));

/**
 * Connects a `PortConnection` to a server of this script, lets the server write 64 KiB and reset, and reports the
 * frames the agent sent. `connect-then-reset`: the agent first looks after the reset (its connect completes with
 * ECONNRESET). `write-into-reset`: the connection was seen, then the reset came, then the host's bytes arrive before
 * the agent read (its write meets the reset first).
 */
const HARNESS = `
import errno, hashlib, json, os, selectors, socket, struct, sys, time
CHUNK = 65536
exec(compile(sys.stdin.read(), "<sbx agent ports>", "exec"))

class RecordingAgent(object):
    def __init__(self):
        self.selector = selectors.DefaultSelector()
        self.ports = {}
        self.frames = []
    def send(self, header, body=b""):
        self.frames.append((header, body))
    def fail(self, request_id, code, message):
        self.frames.append(({"type": "error", "id": request_id, "code": code, "message": message}, b""))

def reset(peer):
    peer.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    peer.close()

scenario = sys.argv[1]
server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(1)
agent = RecordingAgent()
connection = PortConnection(agent, {"id": 7, "port": server.getsockname()[1], "window": 1 << 20})
agent.ports[7] = connection
peer, _ = server.accept()
payload = os.urandom(64 * 1024)
if scenario == "connect-then-reset":
    peer.sendall(payload)
    reset(peer)
    time.sleep(0.2)
    connection.on_readable(connection.fd, "port")
else:
    connection.on_readable(connection.fd, "port")
    peer.sendall(payload)
    reset(peer)
    time.sleep(0.2)
    connection.data(b"request")
deadline = time.time() + 10
while connection.lost is None and time.time() < deadline:
    for key, _ in agent.selector.select(0.5):
        connection.on_readable(key.fd, "port")
received = b"".join(body for header, body in agent.frames if header["type"] == "port_data")
print(json.dumps({
    "types": sorted(set(header["type"] for header, _ in agent.frames)),
    "last": agent.frames[-1][0] if agent.frames else None,
    "bytes": len(received),
    "intact": hashlib.sha256(received).hexdigest() == hashlib.sha256(payload).hexdigest(),
}))
`;

function runScenario(scenario: "connect-then-reset" | "write-into-reset") {
  const result = spawnSync("python3", ["-c", HARNESS, scenario], { input: PORT_SECTION, encoding: "utf8", timeout: 30_000 });
  expect(result.stderr).toBe("");
  return JSON.parse(result.stdout) as { types: string[]; last: Record<string, unknown> | null; bytes: number; intact: boolean };
}

describe.skipIf(!hasPython)("the agent's port connection when the server writes and resets", () => {
  it("a reset before the agent first looked: the connection is reported, every byte is sent, then the close with the reset", () => {
    const outcome = runScenario("connect-then-reset");
    expect(outcome.types).toEqual(["connected", "port_closed", "port_data"]);
    expect(outcome.bytes).toBe(64 * 1024);
    expect(outcome.intact).toBe(true);
    expect(outcome.last).toEqual({ type: "port_closed", id: 7, message: "Connection reset by peer" });
  });

  it("the host's bytes meet the reset before the agent read: every byte the server sent is still sent, then the close", () => {
    const outcome = runScenario("write-into-reset");
    expect(outcome.types).toEqual(["connected", "port_closed", "port_data"]);
    expect(outcome.bytes).toBe(64 * 1024);
    expect(outcome.intact).toBe(true);
    expect(outcome.last).toMatchObject({ type: "port_closed", id: 7 });
    expect(outcome.last?.message, "the close says why").toMatch(/reset|Broken pipe/);
  });
});
