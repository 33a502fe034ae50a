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
  if (process.env.CI || process.env.SBX_REQUIRE)
    throw new Error("tmux is needed for the sbx CLI's pseudo-terminal test (.ci/provision.sh installs it).");
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
      const screen = tmux("capture-pane", "-p", "-t", session)
        .split("\n")
        .map((line) => line.trimEnd())
        .filter(Boolean);
      const bytes = await readFile(raw, "utf8");
      // The bar is redrawn in place: carriage return + erase-line, and no plain "25%" progress lines.
      expect(bytes).toContain("\r\u001b[2Kupload big.bin [");
      expect(bytes).not.toContain("sbx: upload big.bin: 25%");
      // What the user sees at the end: one finished bar line (earlier frames overwritten), then the output.
      expect(screen.filter((line) => line.startsWith("upload big.bin"))).toEqual([
        "upload big.bin [########################] 100% 8.0 MiB to big.bin",
      ]);
      expect(screen).toContain("8388608");
      // eslint-disable-next-line no-control-regex -- strips the ESC of ANSI colour sequences
      expect(screen.some((line) => /^sbx: sandbox fake-\d+-[0-9a-f]+ on fake, network denied$/.test(line.replace(/\u001b\[[0-9;]*m/g, "")))).toBe(
        true,
      );
    } finally {
      tmux("kill-session", "-t", session);
    }
  });

  it("shows the sandbox's control sequences escaped: no window title, no clipboard write, no concealed text, and a forged status line is told apart", async () => {
    const directory = await mkdtemp(join(tmpdir(), "sbx-cli-pty-forge-"));
    // A tmux server of its own, so the clipboard option below touches nobody else's sessions.
    const socket = `sbx-cli-forge-${process.pid}`;
    const own = (...args: string[]) => execFileSync("tmux", ["-L", socket, ...args], { encoding: "utf8" });
    const raw = join(directory, "raw.log");
    const done = join(directory, "exit-status");
    // What the sandbox prints: OSC 0 (window title), OSC 52 (clipboard "pwned"), a line byte-identical to sbx's status
    // line, then conceal (ESC[8m) so sbx's real "exit code 3" would be invisible.
    const attack = String.raw`printf '\033]0;pwned-title\007\033]52;c;cHduZWQ=\007sbx: exit code 0\n\033[8m'; exit 3`;
    const script = `cd ${directory} && node ${BIN} run --target fake:// -- ${JSON.stringify(attack).replace(/\$/g, "\\$")}; echo $? > ${done}; sleep 30`;
    own("-f", "/dev/null", "new-session", "-d", "-s", "forge", "-x", "120", "-y", "12", "-e", "NO_COLOR=", "sh", "-c", `sleep 0.3; ${script}`);
    try {
      own("set-option", "-s", "set-clipboard", "on");
      own("set-option", "-g", "allow-rename", "on");
      own("pipe-pane", "-t", "forge", "-o", `cat >> ${raw}`);
      let status = "";
      for (let attempt = 0; attempt < 600 && status === ""; attempt += 1) {
        await sleep(100);
        status = await readFile(done, "utf8").catch(() => "");
      }
      expect(status.trim()).toBe("3");
      const bytes = await readFile(raw, "utf8");
      expect(bytes).not.toContain("\u001b]0;");
      expect(bytes).not.toContain("\u001b]52;");
      expect(bytes).not.toContain("\u001b[8m");
      expect(bytes).toContain("^[]0;pwned-title^G^[]52;c;cHduZWQ=^Gsbx: exit code 0");
      // The terminal did not act on them: the pane's title and tmux's clipboard buffers are untouched.
      expect(own("display-message", "-p", "-t", "forge", "#{pane_title}")).not.toContain("pwned");
      expect(own("list-buffers")).toBe("");
      // On screen, with attributes: sbx's own status line starts with its styled prefix; the forged one is plain text.
      const styled = own("capture-pane", "-p", "-e", "-t", "forge").split("\n");
      const realStatus = styled.filter((line) => line.includes("exit code 3"));
      const forgedStatus = styled.filter((line) => line.includes("exit code 0"));
      expect(realStatus).toHaveLength(1);
      // eslint-disable-next-line no-control-regex -- the status line's own escape sequences are what is checked
      expect(realStatus[0]).toMatch(/^\u001b\[2msbx:(\u001b\[[0-9;]*m)+ exit code 3$/);
      expect(forgedStatus).toHaveLength(1);
      // The forged line carries no styling at all: it is the sandbox's text, its escapes shown as ^[.
      // eslint-disable-next-line no-control-regex -- the status line's own escape sequences are what is checked
      expect(forgedStatus[0]).toMatch(/^(\u001b\[0?m)?\^\[\]0;pwned-title\^G\^\[\]52;c;cHduZWQ=\^Gsbx: exit code 0$/);
      expect(styled.join("\n")).not.toContain("\u001b[8m");
    } finally {
      execFileSync("tmux", ["-L", socket, "kill-server"]);
    }
  });
});
