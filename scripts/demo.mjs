#!/usr/bin/env node
// The sbx demo: runs a shell command and Python code in a sandbox and prints the output and the audit record.
// It uses Docker when it is usable here, and otherwise the in-process fake, saying so.
import { createSandbox, detectBackends } from "@sbx/core";

const requestedImage = process.env.SBX_DOCKER_IMAGE;
const defaultImage = "python:3.12-slim";
/** Images already on this machine that the demo can use without pulling (the second is what CI builds offline). */
const localCandidates = requestedImage ? [] : [defaultImage, "sbx-test/python:3.11"];
const fakeNotice = "Running on the in-process fake backend instead: it is NOT a security boundary.";
const sandboxOptions = { timeoutMs: 120_000, env: { GREETING: "hello from sbx" } };

/** Docker with a local image if there is one, otherwise Docker pulling the image, otherwise the fake. */
async function createDemoSandbox() {
  const statuses = await detectBackends();
  const docker = statuses.find((status) => status.backend === "docker");
  if (!docker?.usable) {
    return {
      sandbox: await createSandbox("fake://", sandboxOptions),
      target: "fake://",
      notice: `${fakeNotice}\nWhy not Docker: ${docker?.reason ?? "no Docker adapter found."}`,
    };
  }
  for (const image of localCandidates) {
    try {
      return { sandbox: await createSandbox(`docker://${image}`, { ...sandboxOptions, settings: { pull: false } }), target: `docker://${image}` };
    } catch {
      // Not on this machine: try the next one.
    }
  }
  const image = requestedImage ?? defaultImage;
  try {
    return { sandbox: await createSandbox(`docker://${image}`, sandboxOptions), target: `docker://${image}` };
  } catch (error) {
    const notice = `Docker is usable, but a sandbox from ${image} could not be created: ${error.message}\n${fakeNotice} Set SBX_DOCKER_IMAGE to an image with sh and python3 that is available here.`;
    return { sandbox: await createSandbox("fake://", sandboxOptions), target: "fake://", notice };
  }
}

function banner(title) {
  console.log(`\n── ${title} ${"─".repeat(Math.max(0, 60 - title.length))}`);
}

function indent(label, text) {
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => `  ${label} │ ${line}`)
    .join("\n");
}

const { sandbox, target, notice } = await createDemoSandbox();

try {
  if (notice) console.log(`NOTICE: ${notice}`);
  console.log(`Sandbox ${sandbox.id} on backend "${sandbox.backend}" (target ${target})`);

  banner("shell command");
  const command = 'echo "$GREETING"; echo "working in $(pwd)"; echo "to stderr" >&2; exit 3';
  console.log(`$ ${command}`);
  const result = await sandbox.commands.run(command, { onStdout: (text) => process.stdout.write(`  stdout │ ${text}`) });
  console.log(indent("stderr", result.stderr));
  console.log(`  exit code ${result.exitCode} (a non-zero exit is a result, not an error)`);

  banner("Python code");
  const code = "import sys\nsquares = [n * n for n in range(6)]\nprint('squares:', squares)\nprint('python', sys.version.split()[0])\n1 / 0";
  console.log(
    code
      .split("\n")
      .map((line) => `  >>> ${line}`)
      .join("\n"),
  );
  const execution = await sandbox.runCode(code);
  console.log(indent("stdout", execution.stdout));
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
