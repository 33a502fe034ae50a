import { existsSync } from "node:fs";

/**
 * A POSIX `sh` script that closes every descriptor but 0, 1 and 2, then `exec "$@"`. Node marks its own descriptors
 * close-on-exec, but not the ones its own parent passed down (a test runner's pipes, an IPC channel), and libuv closes
 * nothing past the stdio it is given: without this, a host process started by an adapter holds them (ADR 0029).
 * Descriptors 10 and up need a shell that parses multi-digit redirections (bash, busybox, ksh); under dash the script
 * exits 125 saying so rather than leave one open.
 */
export const CLOSE_INHERITED_DESCRIPTORS_SCRIPT = [
  "for sbx_path in /proc/self/fd/*; do",
  '  [ -e "$sbx_path" ] || continue',
  "  sbx_fd=${sbx_path##*/}",
  "  case $sbx_fd in",
  "    0|1|2) ;;",
  '    [3-9]) eval "exec $sbx_fd>&-" ;;',
  "    *)",
  "      if (eval 'exec 10>&-') 2>/dev/null; then eval \"exec $sbx_fd>&-\"",
  '      else echo "sbx: this shell cannot close the inherited descriptor $sbx_fd; install bash" >&2; exit 125',
  "      fi ;;",
  "  esac",
  "done",
  "unset sbx_path sbx_fd",
  'exec "$@"',
].join("\n");

const SHELLS_THAT_CLOSE_ANY_DESCRIPTOR = ["/bin/bash", "/usr/bin/bash", "/bin/busybox", "/usr/bin/busybox"] as const;

/**
 * Prefixes a host command line (`[file, ...args]`) so the process it starts inherits only stdin, stdout and stderr of
 * the host process: `["/bin/bash", "-c", CLOSE_INHERITED_DESCRIPTORS_SCRIPT, "sbx-close-descriptors", file, ...args]`
 * (bash, else busybox sh, else /bin/sh). For adapters whose sandbox processes are host processes (Linux only: the
 * script reads /proc/self/fd). Pass the result to `child_process.spawn(result[0], result.slice(1), …)`.
 * @example const [file, ...args] = onlyStandardDescriptors(["unshare", "--pid", "sh", "-c", command]); spawn(file, args, { stdio: "pipe" });
 */
export function onlyStandardDescriptors(commandLine: readonly string[]): [string, ...string[]] {
  const shell = SHELLS_THAT_CLOSE_ANY_DESCRIPTOR.find((path) => existsSync(path));
  const shellCommand = shell === undefined ? ["/bin/sh"] : shell.endsWith("busybox") ? [shell, "sh"] : [shell];
  return [shellCommand[0]!, ...shellCommand.slice(1), "-c", CLOSE_INHERITED_DESCRIPTORS_SCRIPT, "sbx-close-descriptors", ...commandLine];
}
