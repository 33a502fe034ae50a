/**
 * How a command reaches the Pod without its text or environment appearing in the exec URL (which API server audit
 * logs record): the exec's argv is a fixed bootstrap that reads an exact number of bytes from stdin (the header, a
 * shell script ending in a sentinel line), checks the sentinel, and evaluates it. The header records the process id
 * for kills, then replaces itself with the command under exactly the requested environment (`env -i`). The rest of
 * stdin is the command's.
 */
import { shellQuote, type SpawnRequest } from "@sbx/core/adapter";

/** Where each command's process id is recorded, for the kill (`/tmp` is the Pod's own emptyDir). */
export const PID_DIRECTORY = "/tmp/.sbx-pids";

/** The last line of every header; a header cut short (a dropped stream) is refused rather than run in part. */
const SENTINEL = "#sbx-header-end";

/** Exit code of the bootstrap when the header arrived incomplete. */
export const INCOMPLETE_HEADER_EXIT_CODE = 125;

/** The fixed bootstrap: `$1` is the header's byte length. `dd bs=1` reads exactly that many bytes, no more. */
const BOOTSTRAP = `header=$(dd bs=1 count="$1" 2>/dev/null)
case "$header" in *'${SENTINEL}') ;; *) exit ${INCOMPLETE_HEADER_EXIT_CODE} ;; esac
eval "$header"`;

/** The exec argv and the header bytes to write first on its stdin. */
export function spawnInvocation(request: SpawnRequest, spawnId: string): { argv: string[]; header: Uint8Array } {
  const assignments = Object.entries(request.env).map(([name, value]) => shellQuote(`${name}=${value}`));
  const script = `cd -- ${shellQuote(request.cwd)} || exit 126\n${request.command}`;
  const lines = [
    `mkdir -p ${PID_DIRECTORY} && echo $$ > ${PID_DIRECTORY}/${spawnId}`,
    request.stdin ? "" : "exec </dev/null",
    `exec env -i ${assignments.join(" ")} /bin/sh -c ${shellQuote(script)}`,
    SENTINEL,
  ];
  const header = new TextEncoder().encode(lines.join("\n"));
  return { argv: ["/bin/sh", "-c", BOOTSTRAP, "sbx-spawn", String(header.byteLength)], header };
}

/** The exec argv that kills a command's whole process tree by its recorded id (waiting briefly for the record). */
export function killInvocation(spawnId: string, killScript: string): string[] {
  const waitAndKill = `file=${PID_DIRECTORY}/"$1"
for attempt in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do [ -s "$file" ] && break; sleep 0.1; done
[ -s "$file" ] || exit 0
pid=$(cat "$file")
/bin/bash -c "$2" sbx-kill "$pid" || exit $?
rm -f "$file"`;
  return ["/bin/sh", "-c", waitAndKill, "sbx-kill", spawnId, killScript];
}
