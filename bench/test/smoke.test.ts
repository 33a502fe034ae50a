import { spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { createSandboxProvider } from "@sbx/docker";
import { describe, expect, it } from "vitest";

/**
 * Every bench in bench/ runs in smoke mode (`--smoke`: one round, small sizes; lib/smoke.mjs) and must exit 0 and
 * print its result lines, so a bench cannot rot unnoticed (issue 18: docker-bench.mjs stopped starting when
 * tar-stream left @sbx/docker). The figures of a smoke run are not checked: tests never assert on speed (adr/0034).
 */
const benchDirectory = join(import.meta.dirname, "..");

/** A finite decimal number, as the benches print ratios. */
const NUMBER = String.raw`\d+(?:\.\d+)?`;

interface BenchSmoke {
  /** The bench's file in bench/. */
  readonly file: string;
  /** Lines its output must contain: the ratio (or figure) lines a full run reports. */
  readonly lines: readonly RegExp[];
  /** Whether it needs a Docker Engine (every bench but the fake's does: the emulators run containers too). */
  readonly docker: boolean;
}

const benches: readonly BenchSmoke[] = [
  {
    file: "docker-bench.mjs",
    lines: [
      new RegExp(String.raw`\| cold create to first command \(ms\) +\|.*\| ${NUMBER} +\| <= 1\.10`),
      new RegExp(String.raw`\| warm exec \`true\` \(ms\) +\|.*\| ${NUMBER} +\| <= 1\.10`),
      new RegExp(String.raw`\| 1 MiB upload \(ms\) +\|.*\| ${NUMBER} +\| <= 1\.11`),
      new RegExp(String.raw`\| 1 MiB download \(ms\) +\|.*\| ${NUMBER} +\| <= 1\.11`),
      new RegExp(String.raw`\| 2 sandboxes at once \(ms, total\) +\|.*\| ${NUMBER} +\| <= 1\.10`),
      new RegExp(String.raw`\| host RSS growth downloading 16 MiB \(MiB\) +\| ${NUMBER}`),
    ],
    docker: true,
  },
  {
    file: "agent-bench.mjs",
    lines: [
      new RegExp(String.raw`\| stateful runCode \`x \+= 1; x\` \(agent\) +\|.*\| ${NUMBER} +\| <= 0\.15`),
      new RegExp(String.raw`\| one-shot runCode \`1 \+ 1\` \(agent\) +\|.*\| ${NUMBER} +\| <= 0\.3`),
      new RegExp(String.raw`\| commands\.run\(\`true\`\) through the agent \(Docker default, warm\) +\|.*\| ${NUMBER} +\| <= 0\.15`),
      new RegExp(String.raw`\| E2B \(emulator\) stateful runCode \`x \+= 1; x\` +\|.*\| ${NUMBER} +\|`),
    ],
    docker: true,
  },
  {
    file: "terminal-bench.mjs",
    lines: [
      new RegExp(String.raw`\| sbx terminal \(agent pty\) +\| ${NUMBER} +\| ${NUMBER} +\| ${NUMBER} +\|`),
      new RegExp(String.raw`\| docker exec -it \(dockerode, raw\) +\| ${NUMBER} +\| ${NUMBER} +\| 1\.000 +\|`),
    ],
    docker: true,
  },
  {
    file: "ports-bench.mjs",
    lines: [
      new RegExp(String.raw`\| sbx ports\.expose \(agent, no network\) +\| ${NUMBER} +\| ${NUMBER} +\| ${NUMBER} +\| ${NUMBER} +\|`),
      new RegExp(String.raw`\| docker published port \(bench network\) +\| ${NUMBER} +\| ${NUMBER} +\| ${NUMBER} +\| 1\.000 +\|`),
      new RegExp(String.raw`\| client flooding a server that never reads +\| -?${NUMBER} +\| ${NUMBER} +\| ${NUMBER} +\|`),
      new RegExp(String.raw`\| server flooding a client that never reads +\| -?${NUMBER} +\| ${NUMBER} +\| - +\|`),
    ],
    docker: true,
  },
  {
    file: "e2b-bench.mjs",
    lines: [
      new RegExp(String.raw`^create \(\+ kill, not timed\) .* ${NUMBER}x`, "m"),
      new RegExp(String.raw`^command \(echo\) .* ${NUMBER}x`, "m"),
      new RegExp(String.raw`^file round trip \(64 KiB write \+ read\) .* ${NUMBER}x`, "m"),
      new RegExp(String.raw`^runCode in a context .* ${NUMBER}x`, "m"),
    ],
    docker: true,
  },
  {
    file: "modal-bench.mjs",
    lines: [
      new RegExp(String.raw`^create \(\+ kill, not timed\) .* ${NUMBER}x`, "m"),
      new RegExp(String.raw`^command \(echo\) .* ${NUMBER}x`, "m"),
      new RegExp(String.raw`^file round trip \(64 KiB write \+ read\) .* ${NUMBER}x`, "m"),
    ],
    docker: true,
  },
  {
    file: "modal-snapshot-bench.mjs",
    lines: [
      new RegExp(
        String.raw`^round 1: snapshot\(\) ${NUMBER} ms; create from snapshot → first command ${NUMBER} ms; plain create → first command ${NUMBER} ms; copy identical: true$`,
        "m",
      ),
    ],
    docker: true,
  },
  {
    file: "fake-bench.mjs",
    lines: [
      new RegExp(String.raw`\| lazy \(baseline\), runCode right after create +\| ${NUMBER} +\| ${NUMBER} +\| 1\.000 `),
      new RegExp(String.raw`\| preload, runCode right after create +\| ${NUMBER} +\| ${NUMBER} +\| ${NUMBER} `),
    ],
    docker: false,
  },
  {
    file: "egress-allowlist-bench.mjs",
    lines: [new RegExp(String.raw`"downloadMB":2,.*"medianRatio":${NUMBER},.*"execStreamRatios":\[${NUMBER}\]`)],
    docker: true,
  },
  {
    file: "host-memory.mjs",
    lines: [new RegExp(String.raw`"case":"runCode","mebibytes":4,"rssGrowthMiB":-?${NUMBER},`)],
    docker: true,
  },
  {
    file: "pool-bench.mjs",
    lines: [
      new RegExp(String.raw`\| acquire → first command p50 \(ms\) +\| ${NUMBER} +\| ${NUMBER} +\| ${NUMBER} +\| p50 <= 5 ms`),
      new RegExp(String.raw`\| acquire → first command p99 \(ms\) +\| ${NUMBER} +\| ${NUMBER} +\| ${NUMBER} +\| p99 <= 20 ms`),
      new RegExp(String.raw`\| acquire alone p50 \(ms\) +\| ${NUMBER}`),
      new RegExp(String.raw`\| acquire rate while refilling \(sandboxes/s, .*\) +\| ${NUMBER}`),
      new RegExp(String.raw`\| host RSS per pooled sandbox \(MiB\) +\| -?${NUMBER}`),
      new RegExp(String.raw`\| container memory per pooled sandbox \(MiB, engine's count\) +\| ${NUMBER}`),
    ],
    docker: true,
  },
  {
    file: "kubernetes-bench.mjs",
    lines: [
      new RegExp(
        String.raw`\| k8s, agent: start \(default\) +\| ${NUMBER} +\| ${NUMBER} +\| ${NUMBER} +\| ${NUMBER} +\| ${NUMBER} +\| ${NUMBER} +\|`,
      ),
      new RegExp(String.raw`\| k8s, agent: background +\| ${NUMBER} +\| ${NUMBER} +\| ${NUMBER} +\| ${NUMBER} +\| ${NUMBER} +\| ${NUMBER} +\|`),
      new RegExp(
        String.raw`\| k8s, exec per command \(off\) +\| ${NUMBER} +\| ${NUMBER} +\| ${NUMBER} +\| ${NUMBER} +\| ${NUMBER} +\| ${NUMBER} +\|`,
      ),
      new RegExp(
        String.raw`^2 sandboxes at once: 0 errors, .* growth at peak -?${NUMBER} MiB \(V8 heap used ${NUMBER} → peak ${NUMBER} MiB\); emulator process RSS before ${NUMBER} MiB`,
        "m",
      ),
    ],
    docker: true,
  },
  {
    file: "apple-container-bench.mjs",
    lines: [
      new RegExp(String.raw`\| create → first command, agent \(median ms\) +\| ${NUMBER} +\| ${NUMBER} +\| ${NUMBER} +\|`),
      new RegExp(String.raw`\| create → first command, exec per command \(median ms\) +\| ${NUMBER} +\| ${NUMBER} +\| ${NUMBER} +\|`),
      new RegExp(String.raw`\| warm command, agent \(median ms\) +\| ${NUMBER} +\| ${NUMBER} +\| ${NUMBER} +\|`),
      new RegExp(String.raw`\| warm command, exec per command \(median ms\) +\| ${NUMBER} +\| ${NUMBER} +\| ${NUMBER} +\|`),
    ],
    docker: true,
  },
  {
    file: "e2b-ports-bench.mjs",
    lines: [new RegExp(String.raw`^  ratio port / cat: ${NUMBER}$`, "m")],
    docker: true,
  },
  {
    file: "docker-attacks.mjs",
    lines: [/\{"attack":"apparmor-audit","enforcement":"[^"]+"\}/],
    docker: true,
  },
];

const image = process.env.SBX_DOCKER_IMAGE ?? "sbx-test/python:3.11";
const required = (process.env.SBX_REQUIRE ?? "")
  .split(",")
  .map((name) => name.trim())
  .includes("docker");
const status = await createSandboxProvider({ image }).detect();
if (!status.usable) {
  const message = `Docker is not usable here: ${status.reason} ${status.remedy}`;
  if (required) throw new Error(`SBX_REQUIRE names docker, but ${message}`);
  console.warn(`\n[sbx] SKIPPING the bench smoke runs that need Docker: ${message}\n`);
}

/** Runs one bench in smoke mode; resolves with its exit code and its output (stdout and stderr). */
async function runSmoke(file: string, signal: AbortSignal): Promise<{ exitCode: number | null; output: string }> {
  const child = spawn(process.execPath, ["--expose-gc", join(benchDirectory, file), "--smoke"], {
    cwd: benchDirectory,
    env: { ...process.env, SBX_BENCH_SMOKE: "1" },
    stdio: ["ignore", "pipe", "pipe"],
    signal,
  });
  let output = "";
  child.stdout.setEncoding("utf8");
  child.stderr.setEncoding("utf8");
  child.stdout.on("data", (text: string) => (output += text));
  child.stderr.on("data", (text: string) => (output += text));
  const [exitCode] = (await once(child, "exit")) as [number | null];
  return { exitCode, output };
}

describe.concurrent("every bench runs in smoke mode and prints its result lines", () => {
  for (const bench of benches) {
    it.skipIf(bench.docker && !status.usable)(`${bench.file} --smoke`, async () => {
      const { exitCode, output } = await runSmoke(bench.file, AbortSignal.timeout(560_000));
      expect(exitCode, output).toBe(0);
      for (const line of bench.lines) expect(output, `${bench.file} printed no line matching ${String(line)}`).toMatch(line);
    });
  }
});
