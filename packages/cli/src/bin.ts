#!/usr/bin/env node
import { runCli } from "./cli.js";

const controller = new AbortController();
let interrupts = 0;
const onInterrupt = () => {
  interrupts += 1;
  if (interrupts > 1) process.exit(130);
  controller.abort();
};
process.on("SIGINT", onInterrupt);
process.on("SIGTERM", onInterrupt);

const status = await runCli({
  argv: process.argv.slice(2),
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  cwd: process.cwd(),
  signal: controller.signal,
});
process.exitCode = controller.signal.aborted && status === 125 ? 130 : status;
