#!/usr/bin/env node
// The sbx demo: runs a shell command and Python code in a sandbox and prints the output and the audit record.
// It uses Docker when it is usable here, and otherwise the in-process fake, saying so.
import { createSandbox, detectBackends } from "@sbx/core";

const dockerImage = process.env.SBX_DOCKER_IMAGE ?? "python:3.12-slim";

async function pickTarget() {
  const statuses = await detectBackends();
  const docker = statuses.find((status) => status.backend === "docker");
  if (docker?.usable) return { target: `docker://${dockerImage}`, notice: undefined };
  return {
    target: "fake://",
    notice: `Docker is not usable here (${docker?.reason ?? "unknown"}).\nRunning on the in-process fake backend instead: it is NOT a security boundary. ${docker?.remedy ?? ""}`,
  };
}

function banner(title) {
  console.log(`\n── ${title} ${"─".repeat(Math.max(0, 60 - title.length))}`);
}

let { target, notice } = await pickTarget();
let sandbox;
try {
  sandbox = await createSandbox(target, { timeoutMs: 120_000, env: { GREETING: "hello from sbx" } });
} catch (error) {
  if (!target.startsWith("docker://")) throw error;
  notice = `Docker is usable, but a sandbox from ${dockerImage} could not be created: ${error.message}\nRunning on the in-process fake backend instead: it is NOT a security boundary. Set SBX_DOCKER_IMAGE to an image with sh and python3 that is available here.`;
  target = "fake://";
  sandbox = await createSandbox(target, { timeoutMs: 120_000, env: { GREETING: "hello from sbx" } });
}

try {
  if (notice) console.log(`NOTICE: ${notice}`);
  console.log(`Sandbox ${sandbox.id} on backend "${sandbox.backend}" (target ${target})`);

  banner("shell command");
  const command = 'echo "$GREETING"; uname -s; echo "to stderr" >&2; exit 3';
  console.log(`$ ${command}`);
  const result = await sandbox.commands.run(command, { onStdout: (text) => process.stdout.write(`  stdout │ ${text}`) });
  console.log(`  stderr │ ${result.stderr.trimEnd()}`);
  console.log(`  exit code ${result.exitCode} (a non-zero exit is a result, not an error)`);

  banner("Python code");
  const code = "import sys\nsquares = [n * n for n in range(6)]\nprint('squares:', squares)\nprint('python', sys.version.split()[0])\n1 / 0";
  console.log(code.split("\n").map((line) => `  >>> ${line}`).join("\n"));
  const execution = await sandbox.runCode(code);
  process.stdout.write(execution.stdout.split("\n").filter(Boolean).map((line) => `  stdout │ ${line}\n`).join(""));
  console.log(`  error  │ ${execution.error ? `${execution.error.name}: ${execution.error.value}` : "none"}`);
  console.log(`  results│ ${JSON.stringify(execution.results)} (null: this backend has no rich-result channel)`);

  banner("files");
  await sandbox.files.write("notes/hello.txt", "written through the files API\n");
  const listing = await sandbox.commands.run("cat notes/hello.txt");
  console.log(`  cat notes/hello.txt │ ${listing.stdout.trimEnd()}`);

  banner("audit record");
  console.log(JSON.stringify(sandbox.audit(), null, 2));
} finally {
  await sandbox.kill();
}
