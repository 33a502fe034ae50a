import { execFile } from "node:child_process";
import { chmod, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createSandboxProvider } from "@sbx/docker";
import { describe, expect, it } from "vitest";

const BIN = fileURLToPath(new URL("../bin/sbx.js", import.meta.url));
const SCRIPT = fileURLToPath(new URL("../examples/quickstart.sh", import.meta.url));
const IMAGE = process.env.SBX_DOCKER_IMAGE ?? "sbx-test/python:3.11";
// Docker where it is usable (Python starts in well under a second there), else the fake (Pyodide takes seconds to load).
const TARGET = (await createSandboxProvider({ image: IMAGE }).detect()).usable ? `docker://${IMAGE}` : "fake://";

describe("docs/integrations/cli.md", () => {
  it("shows examples/quickstart.sh verbatim", async () => {
    const page = await readFile(new URL("../../../docs/integrations/cli.md", import.meta.url), "utf8");
    const script = (await readFile(SCRIPT, "utf8"))
      .split("\n")
      .filter((line) => !line.startsWith("#!") && !line.startsWith("# The example"))
      .join("\n");
    expect(page).toContain(script.trim());
  });

  it(`its example runs as a user would run it (sbx on PATH, target ${TARGET})`, async () => {
    const directory = await mkdtemp(join(tmpdir(), "sbx-cli-docs-"));
    await writeFile(join(directory, "sbx"), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
    await chmod(join(directory, "sbx"), 0o755);
    const { stdout, stderr } = await promisify(execFile)("sh", [SCRIPT], {
      env: { ...process.env, PATH: `${directory}:${process.env.PATH}`, SBX_TARGET: TARGET, NO_COLOR: "1" },
    });
    const lines = stdout.split("\n");
    expect(lines).toContain("42");
    expect(lines.filter((line) => line.startsWith("exit code:"))).toEqual(["exit code: 3", "exit code: 124"]);
    expect(stdout).toContain('"stdout": "45\\n"');
    expect(stderr).toContain("error [SBX_TIMEOUT]");
    expect(stderr).toContain("remedy: Raise --timeout");
  });
});
