import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";

const BIN = fileURLToPath(new URL("../bin/sbx.js", import.meta.url));

function hasTmux(): boolean {
  try {
    execFileSync("tmux", ["-V"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

const tmuxAvailable = hasTmux();
if (!tmuxAvailable) {
  if (process.env.CI || process.env.SBX_REQUIRE) throw new Error("tmux is needed for the sbx CLI's pseudo-terminal test (.ci/provision.sh installs it).");
  console.warn("\n[sbx] SKIPPING the sbx CLI's pseudo-terminal test: tmux is not installed (apt-get install tmux).\n");
}

const tmux = (...args: string[]) => execFileSync("tmux", args, { encoding: "utf8" });

describe.skipIf(!tmuxAvailable)("sbx in a real pseudo-terminal (tmux)", () => {
  it("draws the upload progress bar in place on a terminal", async () => {
    const directory = await mkdtemp(join(tmpdir(), "sbx-cli-pty-"));
    await writeFile(join(directory, "big.bin"), Buffer.alloc(8 * 1024 * 1024, 1));
    const session = `sbx-cli-pty-${process.pid}`;
    const raw = join(directory, "raw.log");
    const done = join(directory, "exit-status");
    const script = `cd ${directory} && node ${BIN} run --target fake:// --upload big.bin -- 'wc -c < big.bin'; echo $? > ${done}; sleep 30`;
    tmux("new-session", "-d", "-s", session, "-x", "100", "-y", "12", "-e", "NO_COLOR=", "sh", "-c", `sleep 0.3; ${script}`);
    try {
      tmux("pipe-pane", "-t", session, "-o", `cat >> ${raw}`);
      let status = "";
      for (let attempt = 0; attempt < 600 && status === ""; attempt += 1) {
        await sleep(100);
        status = await readFile(done, "utf8").catch(() => "");
      }
      expect(status.trim()).toBe("0");
      const screen = tmux("capture-pane", "-p", "-t", session).split("\n").map((line) => line.trimEnd()).filter(Boolean);
      const bytes = await readFile(raw, "utf8");
      // The bar is redrawn in place: carriage return + erase-line, and no plain "25%" progress lines.
      expect(bytes).toContain("\r\u001b[2Kupload big.bin [");
      expect(bytes).not.toContain("sbx: upload big.bin: 25%");
      // What the user sees at the end: one finished bar line (earlier frames overwritten), then the output.
      expect(screen.filter((line) => line.startsWith("upload big.bin"))).toEqual(["upload big.bin [########################] 100% 8.0 MiB to big.bin"]);
      expect(screen).toContain("8388608");
      // eslint-disable-next-line no-control-regex -- strips the ESC of ANSI colour sequences
  expect(screen.some((line) => /^sbx: sandbox fake-\d+-[0-9a-f]+ on fake, network denied$/.test(line.replace(/\u001b\[[0-9;]*m/g, "")))).toBe(true);
    } finally {
      tmux("kill-session", "-t", session);
    }
  });
});
