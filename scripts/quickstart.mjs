#!/usr/bin/env node
// Bootstraps the workspace with nothing but Node.js >= 20, then runs the demo, the tests or the benchmarks.
// Usage: node scripts/quickstart.mjs demo|test|bench [extra arguments]
// It uses a global pnpm 10 when there is one, and otherwise runs pnpm 10 through npx (no global install needed).
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const PNPM_VERSION = "10.34.8";
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const [task = "test", ...extra] = process.argv.slice(2);

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: "inherit", env: process.env, ...options });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

function note(message) {
  process.stderr.write(`[sbx] ${message}\n`);
}

function findPnpm() {
  const probe = spawnSync("pnpm", ["--version"], { encoding: "utf8" });
  if (probe.status === 0 && probe.stdout.trim().startsWith("10.")) return { command: "pnpm", prefix: [] };
  return { command: "npx", prefix: ["--yes", `pnpm@${PNPM_VERSION}`] };
}

const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 20 || (major === 20 && minor < 19) || major === 21 || (major === 22 && minor < 12)) {
  note(`Node.js ${process.versions.node} is not supported: sbx needs Node.js 20.19+ or 22.12+ (engines: ^20.19.0 || >=22.12.0).`);
  process.exit(1);
}

const pnpm = findPnpm();
const pnpmRun = (args) => run(pnpm.command, [...pnpm.prefix, ...args]);

if (!existsSync(join(root, "node_modules", ".modules.yaml"))) {
  note("installing dependencies (first run only)");
  if (pnpmRun(["install", "--frozen-lockfile", "--reporter=silent"]) !== 0) process.exit(1);
}
note("building packages");
if (pnpmRun(["exec", "turbo", "run", "build", "--output-logs=errors-only", "--log-prefix=none"]) !== 0) process.exit(1);

/**
 * Whether `test` checks the formatting (prettier --check) before the tests. The whole tree was formatted
 * once in its own commit (adr/0034), which turned this on: a file off the format fails the run.
 */
const FORMAT_CHECKED = true;

/** Lint (and the format check), then vitest: a lint finding fails the run before any test starts (adr/0034). */
function test() {
  note("linting (eslint)");
  // Locally the cache skips unchanged files; CI lints everything, since a cached file's type-aware findings can go
  // stale when a file it imports changes.
  const cache = process.env.CI ? [] : ["--cache", "--cache-location", "node_modules/.cache/eslint/"];
  if (pnpmRun(["exec", "eslint", ".", ...cache]) !== 0) return 1;
  if (FORMAT_CHECKED) {
    note("checking the format (prettier --check)");
    if (pnpmRun(["exec", "prettier", "--check", ".", "--log-level", "warn"]) !== 0) return 1;
  }
  return pnpmRun(["exec", "vitest", "run", ...extra]);
}

switch (task) {
  case "demo":
    process.exit(run(process.execPath, [join(root, "scripts", "demo.mjs"), ...extra]));
    break;
  case "test":
    process.exit(test());
    break;
  case "bench":
    process.exit(run(process.execPath, ["--expose-gc", join(root, "bench", "run.mjs"), ...extra]));
    break;
  default:
    note(`unknown task ${task}: use demo, test or bench`);
    process.exit(2);
}
