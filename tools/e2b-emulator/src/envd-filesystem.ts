/**
 * envd's `filesystem.Filesystem` service (Stat, MakeDir, Move, ListDir,
 * Remove) and the plain-HTTP `/files` endpoints. Like envd, which runs as
 * root, everything is done as root: the requesting user only decides how
 * relative paths resolve (its home) and who owns what is created (written
 * files and every missing parent directory are created, then given to the
 * user). The RPCs go to a persistent helper process (a syscall each, like
 * real envd); images that cannot run it (no python3) get the same answers
 * from short `docker exec` scripts. `/files` streams through one
 * `docker exec` per transfer.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { posix } from "node:path";
import { Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import { runExec, startExec } from "@sbx/emulator-kit";
import { homeDirectoryOf, type ContainerSandbox } from "./container-sandbox.js";
import { ConnectProtocolError, readRequestMessage, sendUnaryResponse, type ConnectErrorCode } from "./connect-protocol.js";
import { userFromRequest } from "./envd-authentication.js";
import { handleWatchDir } from "./envd-watch.js";
import { FilesystemHelperUnavailableError, type FilesystemHelperRequest, type HelperEntry } from "./filesystem-helper.js";

/** `EntryInfo` JSON as envd returns it (`type`: 1 file, 2 directory, 3 symlink). */
export interface EntryInfo {
  name: string;
  type: number;
  path: string;
  size: string;
  mode: number;
  permissions: string;
  owner: string;
  group: string;
  modifiedTime: string;
  symlinkTarget?: string;
}

/** GNU find -printf format: type, size, octal mode, symbolic mode, owner, group, mtime, link target, path. */
const FIND_FORMAT = "%y\\t%s\\t%m\\t%M\\t%u\\t%g\\t%T@\\t%l\\t%p\\0";

/** Exit codes used by the helper scripts, mapped to Connect codes. */
const EXIT_CODE_ERRORS: Record<number, ConnectErrorCode> = {
  2: "not_found",
  3: "invalid_argument",
  13: "permission_denied",
  16: "unauthenticated",
  17: "already_exists",
};

/** Resolves a path the way envd does: relative paths are relative to the user's home. */
export function resolveSandboxPath(path: string | undefined | null, user: string): string {
  if (!path) throw new ConnectProtocolError("invalid_argument", "path is required");
  const expanded = path === "~" || path.startsWith("~/") ? homeDirectoryOf(user) + path.slice(1) : path;
  return posix.resolve(homeDirectoryOf(user), expanded);
}

function parseFindOutput(output: string): EntryInfo[] {
  return output
    .split("\0")
    .filter((record) => record.length > 0)
    .map((record) => {
      const [type, size, octalMode, permissions, owner, group, modified, linkTarget, ...pathParts] = record.split("\t");
      const path = pathParts.join("\t");
      const seconds = Number(modified);
      return {
        name: posix.basename(path),
        type: type === "d" ? 2 : type === "l" ? 3 : 1,
        path,
        size: size ?? "0",
        mode: parseInt(octalMode ?? "0", 8),
        permissions: permissions ?? "",
        owner: owner ?? "",
        group: group ?? "",
        modifiedTime: new Date(Math.floor(seconds * 1000)).toISOString(),
        ...(type === "l" && linkTarget ? { symlinkTarget: linkTarget } : {}),
      };
    });
}

/** Runs a helper script as the user and maps failures to Connect errors. */
async function runFilesystemScript(sandbox: ContainerSandbox, user: string, script: string, args: string[]): Promise<string> {
  // As root, like envd; `$0` names the requesting user (owner of what is created).
  const result = await runExec(sandbox.container, {
    command: ["/bin/sh", "-c", `${ENSURE_DIRECTORIES}\n${script}`, user, ...args],
    user: "root",
    workingDirectory: "/",
  });
  if (result.exitCode === 0) return result.stdout.toString("utf8");
  const message = result.stderr.toString("utf8").trim() || `exit status ${result.exitCode}`;
  const code = EXIT_CODE_ERRORS[result.exitCode] ?? (/permission denied/i.test(message) ? "permission_denied" : "internal");
  throw new ConnectProtocolError(code, message);
}

const EXISTS_CHECK = `[ -e "$1" ] || [ -L "$1" ] || { echo "no such file or directory: $1" >&2; exit 2; }`;

/**
 * Shell version of envd's permissions.EnsureDirs: \`ensure_directories DIR USER\` creates each missing
 * component of DIR (0755) and gives it to USER; an existing component that is not a directory fails.
 */
const ENSURE_DIRECTORIES = `ensure_directories() {
  owner="$(id -u "$2"):$(id -g "$2")" || { echo "invalid username: '$2'" >&2; exit 16; }
  current=""
  old_ifs="$IFS"; IFS=/
  for component in $1; do
    [ -z "$component" ] && continue
    current="$current/$component"
    if [ ! -e "$current" ]; then
      mkdir -m 0755 -- "$current" 2>/dev/null || [ -d "$current" ] || { echo "failed to create directory: $current" >&2; exit 1; }
      chown -- "$owner" "$current" || exit 1
    elif [ ! -d "$current" ]; then
      echo "path is a file: $current" >&2; exit 1
    fi
  done
  IFS="$old_ifs"
}`;

async function statEntryWithExec(sandbox: ContainerSandbox, user: string, path: string): Promise<EntryInfo> {
  const output = await runFilesystemScript(sandbox, user, `${EXISTS_CHECK}; exec find "$1" -maxdepth 0 -printf '${FIND_FORMAT}'`, [path]);
  const entry = parseFindOutput(output)[0];
  if (!entry) throw new ConnectProtocolError("not_found", `no such file or directory: ${path}`);
  return entry;
}

function toEntryInfo(entry: HelperEntry): EntryInfo {
  return {
    name: posix.basename(entry.path),
    type: entry.type,
    path: entry.path,
    size: entry.size,
    mode: entry.mode,
    permissions: entry.permissions,
    owner: entry.owner,
    group: entry.group,
    modifiedTime: new Date(entry.modifiedMilliseconds).toISOString(),
    ...(entry.symlinkTarget ? { symlinkTarget: entry.symlinkTarget } : {}),
  };
}

/** The exec-script implementation of each helper request, for images that cannot run the helper. */
async function runWithExec(sandbox: ContainerSandbox, user: string, request: FilesystemHelperRequest): Promise<EntryInfo | EntryInfo[] | null> {
  switch (request.op) {
    case "stat":
      return statEntryWithExec(sandbox, user, request.path);
    case "mkdir":
      await runFilesystemScript(
        sandbox,
        user,
        `if [ -d "$1" ]; then echo "directory already exists: $1" >&2; exit 17; fi; ` +
          `if [ -e "$1" ]; then echo "path already exists but it is not a directory: $1" >&2; exit 3; fi; ensure_directories "$1" "$0"`,
        [request.path],
      );
      return statEntryWithExec(sandbox, user, request.path);
    case "move":
      await runFilesystemScript(sandbox, user, `${EXISTS_CHECK}; ensure_directories "$(dirname -- "$2")" "$0" && mv -T -- "$1" "$2"`, [
        request.source,
        request.destination,
      ]);
      return statEntryWithExec(sandbox, user, request.destination);
    case "list":
      return sortLikeWalkDir(
        parseFindOutput(
          await runFilesystemScript(
            sandbox,
            user,
            `${EXISTS_CHECK}; [ -d "$1" ] || { echo "path is not a directory: $1" >&2; exit 3; }; ` +
              `exec find "$1/" -mindepth 1 -maxdepth "$2" -printf '${FIND_FORMAT}'`,
            [request.path, String(request.depth)],
          ),
        ).map((entry) => ({ ...entry, path: entry.path.replace(/\/\/+/g, "/") })),
      );
    case "remove":
      // os.RemoveAll: a missing path is not an error.
      await runFilesystemScript(sandbox, user, `rm -rf -- "$1"`, [request.path]);
      return null;
  }
}

/** Orders entries as Go's filepath.WalkDir visits them (depth first, names in byte order), as envd lists. */
function sortLikeWalkDir(entries: EntryInfo[]): EntryInfo[] {
  const key = (path: string) => path.split("/").map((part) => Buffer.from(part, "utf8"));
  return entries
    .map((entry) => ({ entry, parts: key(entry.path) }))
    .sort((left, right) => {
      for (let index = 0; index < Math.min(left.parts.length, right.parts.length); index++) {
        const order = Buffer.compare(left.parts[index]!, right.parts[index]!);
        if (order !== 0) return order;
      }
      return left.parts.length - right.parts.length;
    })
    .map(({ entry }) => entry);
}

/** Runs a filesystem request for `user`: through the persistent helper, or with exec scripts when it cannot run. */
async function runFilesystemRequest(
  sandbox: ContainerSandbox,
  user: string,
  request: FilesystemHelperRequest,
): Promise<EntryInfo | EntryInfo[] | null> {
  let result: unknown;
  try {
    result = await sandbox.filesystemHelpers.request(user, request);
  } catch (error) {
    if (error instanceof FilesystemHelperUnavailableError) return runWithExec(sandbox, user, request);
    throw error;
  }
  if (request.op === "remove") return null;
  if (request.op === "list") return (result as HelperEntry[]).map(toEntryInfo);
  return toEntryInfo(result as HelperEntry);
}

/** Handles `POST /filesystem.Filesystem/<method>`. */
export async function handleFilesystemService(
  sandbox: ContainerSandbox,
  method: string,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const user = userFromRequest(request);
  switch (method) {
    case "Stat": {
      const message = await readRequestMessage<{ path?: string }>(request);
      const path = resolveSandboxPath(message.path, user);
      sendUnaryResponse(response, { entry: await runFilesystemRequest(sandbox, user, { op: "stat", path }) });
      return;
    }
    case "MakeDir": {
      const message = await readRequestMessage<{ path?: string }>(request);
      const path = resolveSandboxPath(message.path, user);
      sendUnaryResponse(response, { entry: await runFilesystemRequest(sandbox, user, { op: "mkdir", path }) });
      return;
    }
    case "Move": {
      const message = await readRequestMessage<{ source?: string; destination?: string }>(request);
      const source = resolveSandboxPath(message.source, user);
      const destination = resolveSandboxPath(message.destination, user);
      sendUnaryResponse(response, { entry: await runFilesystemRequest(sandbox, user, { op: "move", source, destination }) });
      return;
    }
    case "ListDir": {
      const message = await readRequestMessage<{ path?: string; depth?: number }>(request);
      const path = resolveSandboxPath(message.path, user);
      const depth = Math.max(1, Number(message.depth ?? 1) || 1);
      sendUnaryResponse(response, { entries: await runFilesystemRequest(sandbox, user, { op: "list", path, depth }) });
      return;
    }
    case "Remove": {
      const message = await readRequestMessage<{ path?: string }>(request);
      await runFilesystemRequest(sandbox, user, { op: "remove", path: resolveSandboxPath(message.path, user) });
      sendUnaryResponse(response, {});
      return;
    }
    case "WatchDir":
      await handleWatchDir(sandbox, request, response);
      return;
    default:
      throw new ConnectProtocolError(
        "unimplemented",
        `filesystem.Filesystem/${method} is not supported by the E2B emulator (no CreateWatcher/GetWatcherEvents/RemoveWatcher)`,
      );
  }
}

/** Sends an envd REST error: JSON `{code, message}`. */
export function sendRestError(response: ServerResponse, status: number, message: string): void {
  if (response.headersSent) {
    response.destroy();
    return;
  }
  const body = JSON.stringify({ code: status, message });
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  response.end(body);
}

/** Read as root like envd (os.Stat then os.Open): symlinks are followed, permissions are not the user's. */
const READ_FILE_SCRIPT = `
[ -e "$1" ] || { echo "path '$1' does not exist" >&2; exit 2; }
[ -d "$1" ] && { echo "path '$1' is a directory" >&2; exit 3; }
stat -L -c %s -- "$1" && exec cat -- "$1"
`;

const REST_STATUS: Record<number, number> = { 2: 404, 3: 400, 13: 403 };

/** `GET /files?path=&username=`: streams the file, with Content-Length, without buffering it. */
export async function handleReadFile(sandbox: ContainerSandbox, url: URL, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const user = userFromRequest(request, url.searchParams.get("username"));
  const path = resolveSandboxPath(url.searchParams.get("path"), user);
  let header: Buffer = Buffer.alloc(0);
  let headerDone = false;
  const stderr: Buffer[] = [];
  let waitingForDrain = false;
  const running = await startExec(
    sandbox.container,
    { command: ["/bin/sh", "-c", READ_FILE_SCRIPT, "e2b-read", path], user: "root", workingDirectory: "/" },
    {
      onStdout: (chunk) => {
        if (headerDone) {
          // Several frames can arrive from one socket read: wait for one drain, not one per frame.
          if (!response.write(chunk) && !waitingForDrain) {
            waitingForDrain = true;
            running.pause();
            response.once("drain", () => {
              waitingForDrain = false;
              running.resume();
            });
          }
          return;
        }
        header = Buffer.concat([header, chunk]);
        const newline = header.indexOf(10);
        if (newline < 0) return;
        headerDone = true;
        const size = header.subarray(0, newline).toString("utf8").trim();
        response.writeHead(200, { "content-type": "application/octet-stream", "content-length": size });
        const rest = header.subarray(newline + 1);
        if (rest.length > 0) response.write(rest);
      },
      onStderr: (chunk) => stderr.push(Buffer.from(chunk)),
    },
  );
  response.on("close", () => {
    if (!response.writableFinished) running.detach();
  });
  const exitCode = await running.exitCode;
  await running.outputEnded;
  if (exitCode !== 0 || !headerDone) {
    const message = Buffer.concat(stderr).toString("utf8").trim() || `exit status ${exitCode}`;
    sendRestError(response, REST_STATUS[exitCode] ?? (/permission denied/i.test(message) ? 403 : 500), message);
    return;
  }
  response.end();
}

/**
 * envd's processFile, as root: missing parents are created and given to the user (EnsureDirs), a directory in
 * the way is refused, the file is given to the user, then written (symlinks followed, as os.OpenFile does).
 */
const WRITE_FILE_SCRIPT = `${ENSURE_DIRECTORIES}
ensure_directories "$(dirname -- "$1")" "$0"
[ -d "$1" ] && { echo "path is a directory: $1" >&2; exit 3; }
: > "$1" && chown -- "$owner" "$1" && exec cat > "$1"`;

/** Streams `data` into a file inside the container (as root, then owned by `user`). */
async function writeFileFromStream(sandbox: ContainerSandbox, user: string, path: string, data: Readable): Promise<void> {
  const stderr: Buffer[] = [];
  const running = await startExec(
    sandbox.container,
    { command: ["/bin/sh", "-c", WRITE_FILE_SCRIPT, user, path], user: "root", workingDirectory: "/", attachStdin: true },
    { onStdout: () => undefined, onStderr: (chunk) => stderr.push(Buffer.from(chunk)) },
  );
  await new Promise<void>((resolve, reject) => {
    data.on("error", reject);
    running.connection.on("error", reject);
    data.on("end", resolve);
    data.pipe(running.connection, { end: false });
  });
  running.closeStdin();
  const exitCode = await running.exitCode;
  running.detach();
  if (exitCode !== 0) {
    const message =
      Buffer.concat(stderr)
        .toString("utf8")
        .trim()
        .replace(/^[\w-]+: \d+: /, "") || `exit status ${exitCode}`;
    throw Object.assign(new Error(message), { status: exitCode === 3 ? 400 : exitCode === 16 ? 401 : /no space left/i.test(message) ? 507 : 500 });
  }
}

/**
 * `POST /files`: `application/octet-stream` bodies (optionally gzip) are streamed
 * into the container; `multipart/form-data` bodies (field `file`, filename is the
 * path when the query has none) are parsed in memory.
 */
export async function handleWriteFiles(sandbox: ContainerSandbox, url: URL, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const user = userFromRequest(request, url.searchParams.get("username"));
  const queryPath = url.searchParams.get("path");
  const contentType = request.headers["content-type"] ?? "";
  const written: Array<{ name: string; type: "file"; path: string }> = [];
  try {
    if (contentType.startsWith("multipart/form-data")) {
      const form = await new Request("http://emulator/files", {
        method: "POST",
        headers: { "content-type": contentType },
        body: Readable.toWeb(request) as ReadableStream,
        duplex: "half",
      } as RequestInit).formData();
      for (const value of form.getAll("file")) {
        if (typeof value === "string") continue;
        const path = resolveSandboxPath(queryPath || value.name, user);
        await writeFileFromStream(sandbox, user, path, Readable.fromWeb(value.stream() as never));
        written.push({ name: posix.basename(path), type: "file", path });
      }
    } else {
      const path = resolveSandboxPath(queryPath, user);
      const encoding = request.headers["content-encoding"];
      const body: Readable = encoding === "gzip" ? request.pipe(createGunzip()) : request;
      await writeFileFromStream(sandbox, user, path, body);
      written.push({ name: posix.basename(path), type: "file", path });
    }
  } catch (error) {
    const status = error instanceof ConnectProtocolError ? 400 : ((error as { status?: number }).status ?? 500);
    sendRestError(response, status, error instanceof Error ? error.message : String(error));
    return;
  }
  const body = JSON.stringify(written);
  response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  response.end(body);
}
