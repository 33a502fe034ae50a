#!/usr/bin/env node
// The consumer check: what a user installing sbx from npm gets. Packs every publishable package (pnpm pack, so
// workspace: ranges become versions), installs the tarballs with npm into a fresh project outside the workspace,
// type-checks the README and docs examples there with `strict`, without `skipLibCheck`, under `module: nodenext`
// and separately under `moduleResolution: bundler`, and runs publint and @arethetypeswrong/cli (ESM-only profile)
// on each tarball. Prints everything; exits non-zero on any failure. Needs the packages built (`pnpm build`) and the
// npm registry for third-party dependencies. Nothing is cached between runs: the temp project is removed at the end.
// Usage: node scripts/consumer-check.mjs [--keep]
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const keep = process.argv.includes("--keep");
const started = Date.now();
const failures = [];

function log(line = "") {
  process.stdout.write(`${line}\n`);
}

/** Runs a command, returning its status and combined output (never throws). */
function run(command, args, options = {}) {
  const result = spawnSync(command, args, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024, ...options });
  return { status: result.status ?? 1, output: `${result.stdout ?? ""}${result.stderr ?? ""}${result.error ? String(result.error) : ""}`.trim() };
}

/** Like `run`, but asynchronous, so the independent checks run side by side. */
function runAsync(command, args, options = {}) {
  const startedAt = Date.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.on("error", (error) => (output += String(error)));
    child.on("close", (status) => resolve({ status: status ?? 1, output: output.trim(), seconds: (Date.now() - startedAt) / 1000 }));
  });
}

function indent(text) {
  return text
    .split("\n")
    .map((line) => `    ${line}`)
    .join("\n");
}

/** The publishable packages: packages/* that are not private. */
function publishablePackages() {
  return readdirSync(join(root, "packages"))
    .map((name) => ({
      directory: join(root, "packages", name),
      manifest: JSON.parse(readFileSync(join(root, "packages", name, "package.json"), "utf8")),
    }))
    .filter(({ manifest }) => !manifest.private)
    .sort((a, b) => a.manifest.name.localeCompare(b.manifest.name));
}

/**
 * Names a README example uses without defining them (the reader supplies them), declared before the example so it
 * type-checks as written. Keyed by `file#block`.
 */
const PRELUDES = {
  "packages/ai-sdk/README.md#1": 'declare const model: import("ai").LanguageModel;',
  "packages/deepagents/README.md#1":
    'declare const target: string;\ndeclare const model: import("@langchain/core/language_models/chat_models").BaseChatModel;',
  "packages/openai-agents/README.md#1": 'declare const target: string;\ndeclare const model: import("@openai/agents-core").Model;',
  "packages/docker/README.md#2": 'declare const sandbox: import("@sbx/core").Sandbox;',
  "packages/e2b/README.md#2": 'declare const sandbox: import("@sbx/core").Sandbox;',
  "packages/modal/README.md#2": 'declare const sandbox: import("@sbx/core").Sandbox;',
};

/**
 * README examples left out of the strict compile, with why. Each is still type-checked in its package (with
 * `skipLibCheck`) and run by that package's tests.
 */
const NOT_COMPILED = {
  "packages/mastra/README.md#1":
    "@mastra/core 1.71.0's own declarations do not compile with skipLibCheck false (its bundled AI SDK v6 provider types " +
    "import V3 names from a bundled @ai-sdk/provider that has only V1, and its bundled AI SDK v4 types use zod 3 names); " +
    "checked and run in packages/mastra (ADR 0043)",
};

/**
 * TypeScript code blocks that stand alone, from the README and the docs: they import an @sbx package and nothing by
 * a relative path (an adapter author's own test file is not something a consumer can compile).
 */
function markdownExamples() {
  const files = [
    join(root, "README.md"),
    ...readdirSync(join(root, "docs", "integrations"))
      .filter((name) => name.endsWith(".md"))
      .map((name) => join(root, "docs", "integrations", name)),
    ...readdirSync(join(root, "packages"))
      .map((name) => join(root, "packages", name, "README.md"))
      .filter(existsSync),
  ];
  const examples = [];
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    const blocks = [...text.matchAll(/```(?:ts|typescript)\n([\s\S]*?)```/g)].map((match) => match[1]);
    blocks.forEach((code, index) => {
      const label = `${file.slice(root.length + 1)}#${index + 1}`;
      if (NOT_COMPILED[label]) log(`  skipped ${label}: ${NOT_COMPILED[label]}`);
      else if (/^import .* from "\.{1,2}\//m.test(code)) log(`  skipped ${label}: imports a relative path (an adapter's own source)`);
      else if (/^import .* from "@sbx\//m.test(code)) examples.push({ label, code: PRELUDES[label] ? `${PRELUDES[label]}\n${code}` : code });
      else log(`  skipped ${label}: a fragment (no import of an @sbx package)`);
    });
  }
  return examples;
}

const workspace = mkdtempSync(join(tmpdir(), "sbx-consumer-check-"));
const tarballs = join(workspace, "tarballs");
const project = join(workspace, "project");
mkdirSync(tarballs);
mkdirSync(join(project, "src"), { recursive: true });
log(`consumer check in ${workspace}`);

try {
  // 1. Pack, every package in one pnpm run (the same pack as `pnpm pack` in each package's folder, workspace: ranges
  // made versions; one pnpm start instead of one per package: 54 s down to about 5 on the loaded CI machine).
  const packages = publishablePackages();
  const packing = run(
    "pnpm",
    ["--recursive", ...packages.flatMap(({ manifest }) => ["--filter", manifest.name]), "pack", "--pack-destination", tarballs],
    {
      cwd: root,
    },
  );
  if (packing.status !== 0) throw new Error(`pnpm pack failed:\n${packing.output}`);
  const packed = [];
  for (const { manifest } of packages) {
    const file = readdirSync(tarballs).find((name) => name.startsWith(manifest.name.replace("@", "").replace("/", "-") + "-"));
    if (!file) throw new Error(`pnpm pack wrote no tarball for ${manifest.name}:\n${packing.output}`);
    packed.push({ name: manifest.name, file: join(tarballs, file) });
  }
  log(`packed ${packed.length} packages: ${packed.map(({ file }) => basename(file)).join(", ")}`);

  // 2. A fresh project outside the workspace; overrides make every @sbx dependency resolve to the tarballs, never the registry.
  const dependencies = Object.fromEntries(packed.map(({ name, file }) => [name, `file:${file}`]));
  const rootManifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const aiRange = JSON.parse(readFileSync(join(root, "packages", "ai-sdk", "package.json"), "utf8")).dependencies.ai;
  // @types/json-schema: the AI SDK's declarations import "json-schema" types without depending on them (their gap, not sbx's).
  const devDependencies = {
    typescript: rootManifest.devDependencies.typescript,
    "@types/node": rootManifest.devDependencies["@types/node"],
    ai: aiRange,
    "@types/json-schema": "^7.0.15",
  };
  writeFileSync(
    join(project, "package.json"),
    JSON.stringify(
      {
        name: "sbx-consumer",
        private: true,
        type: "module",
        dependencies,
        devDependencies,
        overrides: Object.fromEntries(packed.map(({ name }) => [name, `$${name}`])),
      },
      null,
      2,
    ),
  );
  // --prefer-offline: third-party packages already in npm's cache are used without asking the registry whether they
  // changed (a revalidation per package, most of the install's time on a loaded machine); missing ones are fetched.
  const install = run("npm", ["install", "--prefer-offline", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: project });
  log(`npm install: ${install.status === 0 ? "ok" : "FAILED"}${install.output ? `\n${indent(install.output)}` : ""}`);
  if (install.status !== 0) throw new Error("npm install failed");
  const nested = run("find", [join(project, "node_modules"), "-path", "*/node_modules/*/node_modules/@sbx", "-maxdepth", "6"]);
  if (nested.output) throw new Error(`an @sbx package was installed from somewhere other than the tarballs:\n${nested.output}`);

  // 3. Type-check the examples, strict, without skipLibCheck, under nodenext and under bundler.
  const examples = [
    ...markdownExamples(),
    ...readdirSync(join(root, "docs", "examples"))
      .filter((name) => name.endsWith(".ts"))
      .map((name) => ({ label: `docs/examples/${name}`, code: readFileSync(join(root, "docs", "examples", name), "utf8") })),
  ];
  examples.forEach(({ label, code }, index) =>
    writeFileSync(join(project, "src", `example-${String(index + 1).padStart(2, "0")}.ts`), `// ${label}\n${code}`),
  );
  log(
    `examples (${examples.length}):\n${examples.map(({ label }, index) => `  src/example-${String(index + 1).padStart(2, "0")}.ts  ${label}`).join("\n")}`,
  );
  const common = {
    strict: true,
    skipLibCheck: false,
    noEmit: true,
    target: "ES2022",
    lib: ["ES2023", "DOM", "esnext.disposable"],
    types: ["node"],
    isolatedModules: true,
    allowImportingTsExtensions: true,
    forceConsistentCasingInFileNames: true,
  };
  const profiles = {
    nodenext: { ...common, module: "nodenext", moduleResolution: "nodenext" },
    bundler: { ...common, module: "esnext", moduleResolution: "bundler" },
  };
  // 4. publint and attw on each tarball, side by side with the two type-checks (two at a time: the machine is shared).
  const bin = join(root, "node_modules", ".bin");
  const checks = [];
  for (const [profile, compilerOptions] of Object.entries(profiles)) {
    writeFileSync(join(project, `tsconfig.${profile}.json`), JSON.stringify({ compilerOptions, include: ["src"] }, null, 2));
    checks.push({
      title: `tsc (${profile}, strict, skipLibCheck false)`,
      command: join(project, "node_modules", ".bin", "tsc"),
      args: ["-p", `tsconfig.${profile}.json`],
      options: { cwd: project },
    });
  }
  for (const { name, file } of packed) {
    checks.push({ title: `publint --strict ${name}`, command: join(bin, "publint"), args: ["run", file, "--strict"], options: {} });
    checks.push({
      title: `attw --profile esm-only ${name}`,
      command: join(bin, "attw"),
      args: [file, "--profile", "esm-only", "--format", "table-flipped"],
      options: { env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" } },
    });
  }
  const results = new Array(checks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: 2 }, async () => {
      while (next < checks.length) {
        const index = next++;
        const check = checks[index];
        results[index] = await runAsync(check.command, check.args, check.options);
      }
    }),
  );
  checks.forEach((check, index) => {
    const result = results[index];
    log(
      `${check.title}: ${result.status === 0 ? "ok" : "FAILED"} (${result.seconds.toFixed(1)} s)${result.output ? `\n${indent(result.output)}` : ""}`,
    );
    if (result.status !== 0) failures.push(check.title);
  });
} catch (error) {
  failures.push(error instanceof Error ? error.message : String(error));
} finally {
  if (!keep) rmSync(workspace, { recursive: true, force: true });
}

log(`consumer check ${failures.length === 0 ? "passed" : `FAILED (${failures.join("; ")})`} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
process.exit(failures.length === 0 ? 0 : 1);
