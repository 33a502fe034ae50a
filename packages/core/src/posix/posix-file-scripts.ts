/**
 * The file operations of core's POSIX helper set: `sh` scripts that run inside the sandbox, as the sandbox's own
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

/** Streams a regular file to stdout. $1 the path. */
export const POSIX_READ_SCRIPT = [
  POSIX_FILE_PRELUDE,
  'confine_parent "$1"',
  '[ -e "$1" ] || [ -L "$1" ] || exit 44',
  'confine_link "$1"',
  '[ -e "$1" ] || exit 44',
  '[ -d "$1" ] && exit 45',
  '[ -f "$1" ] || exit 48',
  // The size first, so core can refuse a read that ends short (ADR 0026); `-L`: the size of what `cat` reads.
  's=$(stat -L -c %s -- "$1") || exit 50',
  'printf \'%s\\n\' "$s"',
  'exec cat -- "$1"',
].join("\n");

/**
 * Writes stdin to a temporary name next to the target, then renames it over the target with `mv -T` (a final
 * symlink is replaced, never written through, even one swapped in meanwhile); nothing is left behind on failure.
 * $1 the path, $2 a random suffix, $3 the expected size in bytes when known (a short input is refused, not renamed).
 */
export const POSIX_WRITE_SCRIPT = [
  POSIX_FILE_PRELUDE,
  'd=${1%/*}; [ -z "$d" ] && d=/',
  'confine_parent "$1"',
  'if [ -e "$d" ] || [ -L "$d" ]; then [ -d "$d" ] || exit 46; else e=$(mkdir -p -- "$d" 2>&1) || { readonly_fs "$e"; exit 46; }; fi',
  'r=$(readlink -f -- "$d") || exit 47; inside "$r" || exit 47',
  '[ -d "$1" ] && [ ! -L "$1" ] && exit 45',
  't="$r/.sbx-upload-$2"; f="$r/${1##*/}"',
  "trap 'rm -f -- \"$t\"' EXIT",
  'e=$( { cat > "$t"; } 2>&1 ) || { rm -f -- "$t"; readonly_fs "$e"; case "$e" in *"No space left"*) exit 49;; esac; echo "$e" >&2; exit 50; }',
  'if [ -n "$3" ]; then n=$(($(wc -c < "$t"))); [ "$n" -eq "$3" ] || { echo "the sandbox received $n of $3 bytes; nothing was written" >&2; exit 50; }; fi',
  'move_over "$t" "$f" || { readonly_fs "$e"; echo "$e" >&2; exit 50; }',
  "trap - EXIT",
].join("\n");

/** Lists one directory level: per entry `type|size|mtime\nname\0`. $1 the path. */
export const POSIX_LIST_SCRIPT = [
  POSIX_FILE_PRELUDE,
  'confine_parent "$1"',
  '[ -e "$1" ] || [ -L "$1" ] || exit 44',
  'r=$(readlink -f -- "$1") || exit 44; inside "$r" || exit 47',
  '[ -d "$1" ] || exit 46',
  'for f in "$1"/* "$1"/.[!.]* "$1"/..?*; do',
  '  [ -e "$f" ] || [ -L "$f" ] || continue',
  "  stat -c '%F|%s|%Y' -- \"$f\" || continue",
  "  printf '%s\\0' \"${f##*/}\"",
  "done",
].join("\n");

/** Describes one entry without following a final symlink: `type|size|mtime`. $1 the path. */
export const POSIX_STAT_SCRIPT = [POSIX_FILE_PRELUDE, 'confine_parent "$1"', '[ -e "$1" ] || [ -L "$1" ] || exit 44', "exec stat -c '%F|%s|%Y' -- \"$1\""].join("\n");

/** Removes a file or link, or a directory with $2 = `recursive` (exit 45 without). $1 the path. */
export const POSIX_REMOVE_SCRIPT = [
  POSIX_FILE_PRELUDE,
  'confine_parent "$1"',
  '[ -e "$1" ] || [ -L "$1" ] || exit 44',
  'if [ "$2" = recursive ]; then e=$(rm -rf -- "$1" 2>&1) || { readonly_fs "$e"; echo "$e" >&2; exit 50; }; exit 0; fi',
  '[ -d "$1" ] && [ ! -L "$1" ] && exit 45',
  'e=$(rm -f -- "$1" 2>&1) || { readonly_fs "$e"; echo "$e" >&2; exit 50; }',
].join("\n");

/** Creates a directory and its parents; exit 46 when a file is in the way. $1 the path. */
export const POSIX_MKDIR_SCRIPT = [
  POSIX_FILE_PRELUDE,
  'confine_parent "$1"',
  'confine_link "$1"',
  'if [ -e "$1" ] && [ ! -d "$1" ]; then exit 46; fi',
  'e=$(mkdir -p -- "$1" 2>&1) || { readonly_fs "$e"; case "$e" in *"Not a directory"*|*"File exists"*) exit 46;; esac; echo "$e" >&2; exit 50; }',
].join("\n");

/** Renames $1 to $2 (a final symlink at $2 is replaced, never followed). */
export const POSIX_RENAME_SCRIPT = [
  POSIX_FILE_PRELUDE,
  'confine_parent "$1"; confine_parent "$2"',
  '[ -e "$1" ] || [ -L "$1" ] || exit 44',
  'if [ -d "$2" ] && [ ! -L "$2" ] && [ ! -d "$1" ]; then exit 45; fi',
  'if [ -L "$2" ]; then move_over "$1" "$2"; else e=$(mv -f -- "$1" "$2" 2>&1); fi || { readonly_fs "$e"; case "$e" in *"No such file"*) exit 44;; esac; echo "$e" >&2; exit 50; }',
].join("\n");
