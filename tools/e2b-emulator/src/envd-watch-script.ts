/**
 * The Python program that watches a directory inside the sandbox container for the emulator's `WatchDir`, with the
 * kernel's inotify (through `ctypes`, standard library only), reporting what envd's fsnotify watcher reports: one line
 * of JSON per operation, `{"name", "op", "entry"?}`, `name` relative to the watched directory, `op` one of create,
 * rename, chmod, write, remove in fsnotify's order for one event (IN_CREATE/IN_MOVED_TO create, IN_MOVED_FROM/
 * IN_MOVE_SELF rename, IN_ATTRIB chmod, IN_MODIFY write, IN_DELETE/IN_DELETE_SELF remove). First it prints
 * `{"ready": true}` once every watch is placed, or `{"error": "not_found" | "invalid_argument", "message"}`.
 * A recursive watch places a watch on each directory below (links are not followed) and on each new directory, whose
 * entries it then reports as creates. The kernel's queue overflowing prints `{"overflow": true}` and ends, as envd's
 * watcher ends the stream then. It exits when its stdin ends (the emulator dropped the watch). Run as root, like envd.
 * Arguments: the directory, "1" for recursive, "1" to attach entry info to create, write and chmod (as envd does).
 */
export const WATCH_SCRIPT = String.raw`
import ctypes, json, os, select, stat, struct, sys

IN_MODIFY, IN_ATTRIB, IN_MOVED_FROM, IN_MOVED_TO = 0x2, 0x4, 0x40, 0x80
IN_CREATE, IN_DELETE, IN_DELETE_SELF, IN_MOVE_SELF = 0x100, 0x200, 0x400, 0x800
IN_Q_OVERFLOW, IN_IGNORED, IN_ISDIR = 0x4000, 0x8000, 0x40000000
MASK = IN_MODIFY | IN_ATTRIB | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF
root, recursive, with_entry = sys.argv[1], sys.argv[2] == "1", sys.argv[3] == "1"
out = sys.stdout

def say(message):
    out.write(json.dumps(message) + "\n")

try:
    if not stat.S_ISDIR(os.stat(root).st_mode):
        say({"error": "invalid_argument", "message": "path %s not a directory" % root}); out.flush(); sys.exit(0)
except FileNotFoundError:
    say({"error": "not_found", "message": "path %s not found" % root}); out.flush(); sys.exit(0)

libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(os.O_CLOEXEC | os.O_NONBLOCK)
if fd < 0:
    say({"error": "internal", "message": "inotify_init1: %s" % os.strerror(ctypes.get_errno())}); out.flush(); sys.exit(0)
watches = {}

def add(path):
    wd = libc.inotify_add_watch(fd, os.fsencode(path), MASK)
    if wd >= 0:
        watches[wd] = path
    return wd >= 0

def entry(path):
    try:
        info = os.lstat(path)
    except OSError:
        return None
    kind = 2 if stat.S_ISDIR(info.st_mode) else 3 if stat.S_ISLNK(info.st_mode) else 1
    return {"name": os.path.basename(path), "type": kind, "path": path, "size": str(info.st_size), "mode": stat.S_IMODE(info.st_mode),
            "permissions": stat.filemode(info.st_mode), "owner": str(info.st_uid), "group": str(info.st_gid), "mtime": info.st_mtime}

def emit(path, op):
    message = {"name": os.path.relpath(path, root), "op": op}
    if with_entry and op in ("create", "write", "chmod"):
        found = entry(path)
        if found is not None:
            message["entry"] = found
    say(message)

def walk(directory, report):
    for base, names, files in os.walk(directory, followlinks=False):
        for name in names:
            add(os.path.join(base, name))
        if report:
            for name in names + files:
                emit(os.path.join(base, name), "create")

if not add(root):
    say({"error": "internal", "message": "error adding path %s to watcher: %s" % (root, os.strerror(ctypes.get_errno()))}); out.flush(); sys.exit(0)
if recursive:
    walk(root, False)
say({"ready": True})
out.flush()
header = struct.Struct("iIII")
while True:
    readable, _, _ = select.select([fd, 0], [], [])
    if 0 in readable and not os.read(0, 4096):
        sys.exit(0)
    if fd not in readable:
        continue
    try:
        data = os.read(fd, 65536)
    except BlockingIOError:
        continue
    offset = 0
    while offset < len(data):
        wd, mask, cookie, length = header.unpack_from(data, offset)
        name = data[offset + header.size:offset + header.size + length].rstrip(b"\0")
        offset += header.size + length
        if mask & IN_Q_OVERFLOW:
            say({"overflow": True}); out.flush(); sys.exit(0)
        base = watches.get(wd)
        if base is None:
            continue
        if mask & IN_IGNORED:
            watches.pop(wd, None)
            continue
        path = os.path.join(base, os.fsdecode(name)) if name else base
        if mask & (IN_CREATE | IN_MOVED_TO):
            emit(path, "create")
            if recursive and mask & IN_ISDIR and add(path):
                walk(path, True)
        if mask & (IN_MOVED_FROM | IN_MOVE_SELF):
            emit(path, "rename")
        if mask & IN_ATTRIB:
            emit(path, "chmod")
        if mask & IN_MODIFY:
            emit(path, "write")
        if mask & (IN_DELETE | IN_DELETE_SELF):
            emit(path, "remove")
    out.flush()
`;
