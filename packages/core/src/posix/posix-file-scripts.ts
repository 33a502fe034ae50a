/**
 * The shell prelude of core's former file scripts, kept for adapters that still check a path in `sh` before a native
 * call (Modal no longer uses it). Core's own file operations no longer use it: they run the race-free Python helper
 * (`file-helper-program.ts`, ADR 0031), since a check in `sh` followed by a use is a time-of-check/time-of-use gap.
 * What it did: core's POSIX helper set: `sh` scripts that run inside the sandbox, as the sandbox's own
 * user, through the driver's `spawn`. Paths are arguments (never interpolated). They implement the file policy of
 * ADR 0020 with `readlink -f` and `stat -c` (GNU coreutils and BusyBox both have them):
 * - a path whose existing part, or a final symbolic link, resolves outside `$SBX_WORKSPACE` is refused (exit 47);
 * - `stat` and `list` describe a link itself (never followed); `read` follows a final link that stays inside;
 *   `write` replaces a final link with a regular file (never writes through it);
 * - `read` of a directory exits 45, of a FIFO, device or socket 48; listings are sorted by the caller.
 * Exit codes: 44 not found, 45 is a directory, 46 not a directory / a file in the way, 47 escapes the workspace,
 * 48 not a regular file, 49 no space left, 50 other failure (stderr says why), 51 read-only file system.
 */
export const POSIX_FILE_PRELUDE = [
  "W=$SBX_WORKSPACE",
  'inside() { case "$1" in "$W"|"$W"/*) return 0;; esac; return 1; }',
  'confine_parent() { [ "$1" = "$W" ] && return 0; a=${1%/*}; [ -z "$a" ] && a=/; while [ ! -e "$a" ]; do a=${a%/*}; [ -z "$a" ] && a=/; done; r=$(readlink -f -- "$a") || exit 47; inside "$r" || exit 47; }',
  'confine_link() { if [ -L "$1" ]; then r=$(readlink -f -- "$1") || exit 47; inside "$r" || exit 47; fi; }',
  'readonly_fs() { case "$1" in *"Read-only file system"*) exit 51;; esac; }',
  // Renames $1 over $2 without following a final link at $2, even one planted meanwhile (`mv -T`); where mv has no
  // -T (old BusyBox) the link is removed first. mv's stderr is left in $e.
  'move_over() { e=$(mv -fT -- "$1" "$2" 2>&1) && return 0; case "$e" in *"invalid option"*|*"unrecognized option"*) [ -L "$2" ] && rm -f -- "$2"; e=$(mv -f -- "$1" "$2" 2>&1);; *) return 1;; esac; }',
].join("\n");
