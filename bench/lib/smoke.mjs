/**
 * Smoke mode (adr/0034): `--smoke` on a bench's command line, or SBX_BENCH_SMOKE=1, runs one round at small sizes so
 * CI proves every bench still starts, runs each of its paths and prints its ratio lines. The figures of a smoke run
 * mean nothing and nothing checks them; real figures come from a full run on a quiet machine.
 */
export const smoke = process.argv.includes("--smoke") || process.env.SBX_BENCH_SMOKE === "1";

/** The command-line arguments after the script, without the `--smoke` flag. */
export const benchArguments = process.argv.slice(2).filter((argument) => argument !== "--smoke");

/** `full` in a real run, `small` in smoke mode. */
export function sized(full, small) {
  return smoke ? small : full;
}
