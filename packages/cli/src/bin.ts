#!/usr/bin/env node
import { runCli } from "./cli.js";
import type { CliInteractiveTerminal } from "./terminal.js";

const controller = new AbortController();
let interrupts = 0;
const onInterrupt = () => {
  interrupts += 1;
  if (interrupts > 1) process.exit(130);
  controller.abort();
};
process.on("SIGINT", onInterrupt);
process.on("SIGTERM", onInterrupt);

/** The user's terminal for `sbx shell`: raw mode, size, input and resize from this process's stdin and stdout. */
const interactive: CliInteractiveTerminal = {
  isTTY: process.stdin.isTTY === true && process.stdout.isTTY === true,
  size: () => ({ cols: process.stdout.columns || 80, rows: process.stdout.rows || 24 }),
  setRawMode: (raw) => {
    if (process.stdin.isTTY) process.stdin.setRawMode(raw);
  },
  onInput: (listener) => {
    const onData = (data: Buffer) => listener(new Uint8Array(data));
    process.stdin.on("data", onData);
    process.stdin.resume();
    return () => {
      process.stdin.off("data", onData);
      process.stdin.pause();
    };
  },
  onResize: (listener) => {
    process.stdout.on("resize", listener);
    return () => process.stdout.off("resize", listener);
  },
  write: (data) => process.stdout.write(data),
};

const status = await runCli({
  argv: process.argv.slice(2),
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  cwd: process.cwd(),
  signal: controller.signal,
  interactive,
});
process.exitCode = controller.signal.aborted && status === 125 ? 130 : status;
