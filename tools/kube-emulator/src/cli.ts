/** Runs the emulator in the foreground and prints its kubeconfig: `node dist/cli.js > kubeconfig.json`. */
import { startKubeEmulator } from "./index.js";

const emulator = await startKubeEmulator();
process.stdout.write(`${emulator.kubeconfig}\n`);
process.stderr.write(`kube emulator at ${emulator.url}; Ctrl-C stops it\n`);
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => void emulator.stop().then(() => process.exit(0)));
