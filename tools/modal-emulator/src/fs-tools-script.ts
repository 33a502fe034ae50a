/**
 * Stand-in for Modal's in-sandbox filesystem tool, `/__modal/.bin/modal-sandbox-fs-tools`. Modal's SDK (0.11) runs
 * every `sandbox.filesystem.*` call as an exec of that tool with one JSON argument; the emulator installs this Python
 * script at the same path in every container, so those execs run inside the sandbox exactly like any other command.
 *
 * Protocol (verified against modal@0.11.1's client): argv[1] is `{"ReadFile":{"path"}}`, `{"WriteFile":{"path"}}`
 * (content on stdin), `{"ListFiles":{"path"}}`, `{"Stat":{"path"}}`, `{"MakeDirectory":{"path","parents"}}` or
 * `{"Remove":{"path","recursive"}}`. Success: exit 0 with raw bytes (ReadFile), a JSON entry (Stat), a JSON array
 * sorted by name (ListFiles) or nothing. Failure: exit 1 with `{"error_kind","message","detail"}` on stderr.
 */
export const FS_TOOLS_PATH = "/__modal/.bin/modal-sandbox-fs-tools";

/** The script's source (needs python3 in the image). */
export const FS_TOOLS_SOURCE = String.raw`#!/usr/bin/env python3
import errno, grp, json, os, pwd, shutil, stat, sys, tempfile

def fail(kind, message, detail=""):
    sys.stderr.write(json.dumps({"error_kind": kind, "message": message, "detail": detail}))
    sys.stderr.flush()
    sys.exit(1)

KINDS = {errno.ENOENT: "NotFound", errno.EISDIR: "IsDirectory", errno.ENOTDIR: "NotDirectory",
         errno.EEXIST: "AlreadyExists", errno.ENOTEMPTY: "DirectoryNotEmpty", errno.EACCES: "PermissionDenied",
         errno.EPERM: "PermissionDenied", errno.EFBIG: "FileTooLarge"}

def fail_os(error, path, override=None):
    kind = (override or {}).get(error.errno) or KINDS.get(error.errno, "Other")
    fail(kind, "%s: %s" % (os.strerror(error.errno or 0), path), str(error))

def name_of(uid, table):
    try:
        return table(uid)[0]
    except KeyError:
        return str(uid)

def entry(path):
    info = os.lstat(path)
    mode = info.st_mode
    kind = "directory" if stat.S_ISDIR(mode) else "symlink" if stat.S_ISLNK(mode) else "file"
    return {"name": os.path.basename(path.rstrip("/")) or "/", "path": path, "type": kind, "size": info.st_size,
            "mode": mode, "permissions": stat.filemode(mode), "owner": name_of(info.st_uid, pwd.getpwuid),
            "group": name_of(info.st_gid, grp.getgrgid), "modified_time": int(info.st_mtime),
            "symlink_target": os.readlink(path) if stat.S_ISLNK(mode) else None}

def read_file(path):
    try:
        if os.path.isdir(path):
            fail("IsDirectory", "Is a directory: %s" % path)
        with open(path, "rb") as source:
            out = sys.stdout.buffer
            while True:
                chunk = source.read(1 << 20)
                if not chunk:
                    break
                out.write(chunk)
            out.flush()
    except OSError as error:
        fail_os(error, path)

def write_file(path):
    parent = os.path.dirname(path) or "/"
    try:
        if os.path.isdir(path):
            fail("IsDirectory", "Is a directory: %s" % path)
        os.makedirs(parent, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(dir=parent, prefix=".modal-fs-tools-")
    except OSError as error:
        fail_os(error, path, {errno.EEXIST: "NotDirectory"})
    try:
        with os.fdopen(descriptor, "wb") as target:
            source = sys.stdin.buffer
            while True:
                chunk = source.read1(1 << 20) if hasattr(source, "read1") else source.read(1 << 20)
                if not chunk:
                    break
                target.write(chunk)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except OSError as error:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        fail_os(error, path)

def list_files(path):
    try:
        if not os.path.isdir(path):
            os.lstat(path)
            fail("NotDirectory", "Not a directory: %s" % path)
        names = sorted(os.listdir(path))
        print(json.dumps([entry(os.path.join(path, name)) for name in names]))
    except OSError as error:
        fail_os(error, path)

def stat_path(path):
    try:
        print(json.dumps(entry(path)))
    except OSError as error:
        fail_os(error, path)

def make_directory(path, parents):
    try:
        if parents:
            if os.path.lexists(path) and not os.path.isdir(path):
                fail("PathAlreadyExists", "Path exists and is not a directory: %s" % path)
            os.makedirs(path, exist_ok=True)
        else:
            os.mkdir(path)
    except OSError as error:
        fail_os(error, path, {errno.EEXIST: "PathAlreadyExists"})

def remove(path, recursive):
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            if recursive:
                shutil.rmtree(path)
            else:
                os.rmdir(path)
        else:
            os.unlink(path)
    except OSError as error:
        fail_os(error, path)

def main():
    try:
        request = json.loads(sys.argv[1])
        (operation, arguments), = request.items()
        path = arguments["path"]
    except Exception as error:
        fail("InvalidRequest", "bad request", str(error))
    if not path.startswith("/"):
        fail("InvalidRequest", "path must be absolute: %s" % path)
    if operation == "ReadFile":
        read_file(path)
    elif operation == "WriteFile":
        write_file(path)
    elif operation == "ListFiles":
        list_files(path)
    elif operation == "Stat":
        stat_path(path)
    elif operation == "MakeDirectory":
        make_directory(path, bool(arguments.get("parents", True)))
    elif operation == "Remove":
        remove(path, bool(arguments.get("recursive", False)))
    else:
        fail("NotSupported", "operation not supported by the emulator: %s" % operation)

main()
`;
