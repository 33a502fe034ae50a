import { execFileSync } from "node:child_process";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { createSandboxProvider } from "@sbx/docker";
import { describe, expect, it } from "vitest";

const BIN = fileURLToPath(new URL("../bin/sbx.js", import.meta.url));
const IMAGE = process.env.SBX_DOCKER_IMAGE ?? "sbx-test/python:3.11";

function hasTmux(): boolean {
  try {
    execFileSync("tmux", ["-V"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

const required = (process.env.SBX_REQUIRE ?? "")
  .split(",")
  .map((name) => name.trim())
  .includes("docker");
const tmuxAvailable = hasTmux();
const docker = await createSandboxProvider({ image: IMAGE }).detect();
if (!tmuxAvailable || !docker.usable) {
  const reason = !tmuxAvailable ? "tmux is not installed (apt-get install tmux)" : `Docker is not usable here: ${docker.reason} ${docker.remedy}`;
  if (process.env.CI || required) throw new Error(`sbx shell's pseudo-terminal test cannot run: ${reason}`);
  console.warn(`\n[sbx] SKIPPING sbx shell's pseudo-terminal test: ${reason}\n`);
}

describe.skipIf(!tmuxAvailable || !docker.usable)("sbx shell in a real pseudo-terminal (tmux, Docker)", () => {
  it("runs an interactive shell in raw mode: keys and Ctrl-C reach the sandbox, the size follows the window, the exit code is passed through", async () => {
    const directory = await mkdtemp(join(tmpdir(), "sbx-cli-shell-"));
    // A tmux server of its own, without a status line, so the pane is the whole window.
    const socket = `sbx-cli-shell-${process.pid}`;
    const tmux = (...args: string[]) => execFileSync("tmux", ["-L", socket, ...args], { encoding: "utf8" });
    const done = join(directory, "exit-status");
    const script = `node ${BIN} shell --target docker://${IMAGE}; echo $? > ${done}; sleep 60`;
    tmux("-f", "/dev/null", "new-session", "-d", "-s", "shell", "-x", "100", "-y", "30", "sh", "-c", `sleep 0.3; ${script}`);
    const screen = () => tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", "shell");
    const waitFor = async (pattern: RegExp): Promise<RegExpMatchArray> => {
      for (let attempt = 0; attempt < 600; attempt += 1) {
        const match = screen().match(pattern);
        if (match) return match;
        await sleep(100);
      }
      throw new Error(`the screen never showed ${String(pattern)}:\n${screen()}`);
    };
    try {
      tmux("set-option", "-g", "status", "off");
      await waitFor(/sbx: sandbox \S+ on docker/);
      const size = () => tmux("display-message", "-p", "-t", "shell", "#{pane_height} #{pane_width}").trim();
      tmux("send-keys", "-t", "shell", "-l", "stty size; echo hi-$((6 * 7))");
      tmux("send-keys", "-t", "shell", "Enter");
      await waitFor(/hi-42/);
      expect(screen()).toContain(size());
      // Ctrl-C goes to the sandbox (raw mode): it interrupts the sleep there, and sbx keeps running.
      // The marker is the shell's output (the typed line shows `sleep''ing`); the pause lets the sleep become the
      // terminal's foreground job.
      tmux("send-keys", "-t", "shell", "-l", "echo sleep''ing; sleep 300");
      tmux("send-keys", "-t", "shell", "Enter");
      await waitFor(/sleeping$/m);
      await sleep(1_000);
      tmux("send-keys", "-t", "shell", "C-c");
      tmux("send-keys", "-t", "shell", "-l", "echo after-$((1 + 1))");
      tmux("send-keys", "-t", "shell", "Enter");
      await waitFor(/after-2/);
      // The window grows: the sandbox's terminal follows.
      tmux("resize-window", "-t", "shell", "-x", "120", "-y", "40");
      await sleep(500);
      const grown = size();
      expect(grown).toBe("40 120");
      tmux("send-keys", "-t", "shell", "-l", "echo size-now; stty size");
      tmux("send-keys", "-t", "shell", "Enter");
      await waitFor(/size-now\s*\n40 120/);
      tmux("send-keys", "-t", "shell", "-l", "exit 5");
      tmux("send-keys", "-t", "shell", "Enter");
      let status = "";
      for (let attempt = 0; attempt < 600 && status === ""; attempt += 1) {
        await sleep(100);
        status = await readFile(done, "utf8").catch(() => "");
      }
      expect(status.trim(), "sbx exits with the shell's exit code").toBe("5");
    } finally {
      execFileSync("tmux", ["-L", socket, "kill-server"]);
    }
  }, 300_000);
});
