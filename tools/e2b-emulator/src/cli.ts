#!/usr/bin/env node
/**
 * Starts an E2B emulator and prints how to point the SDK at it.
 * Usage: node dist/cli.js [--port N] [--image IMAGE] [--network NAME] [--max-timeout SECONDS]
 */
import { startE2BEmulator, type E2BEmulatorOptions } from "./index.js";

function parseArguments(argv: string[]): E2BEmulatorOptions {
  const options: E2BEmulatorOptions = {};
  for (let index = 0; index < argv.length; index++) {
    const name = argv[index];
    const value = argv[index + 1];
    if (value === undefined) throw new Error(`missing value for ${name}`);
    if (name === "--port") options.port = Number(value);
    else if (name === "--image") options.image = value;
    else if (name === "--network") options.network = value;
    else if (name === "--max-timeout") options.maxTimeoutSeconds = Number(value);
    else throw new Error(`unknown option ${name}`);
    index++;
  }
  return options;
}

const emulator = await startE2BEmulator(parseArguments(process.argv.slice(2)));
console.log(`E2B emulator listening on ${emulator.url}`);
console.log(`export E2B_API_URL=${emulator.url}`);
console.log(`export E2B_SANDBOX_URL=${emulator.url}`);
console.log(`export E2B_API_KEY=${emulator.apiKey}`);
console.log(`Docker network: ${emulator.networkName}. Press Ctrl+C to stop.`);

let stopping = false;
const shutdown = () => {
  if (stopping) return;
  stopping = true;
  void emulator.stop().then(() => process.exit(0));
};
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);
