/**
 * Source of the Python filesystem helper: one long-lived process per sandbox
 * (a docker exec running as root, as envd itself runs), answering envd filesystem
 * requests with plain syscalls instead of one `docker exec` each, like real
 * envd does. The requesting user only decides who owns what is created
 * (`user` in mkdir and move requests), exactly as in envd. Protocol: one JSON request per line on stdin
 * (`{"id", "op", ...arguments}`), one JSON response per line on stdout
 * (`{"id", "ok": true, "result"}` or `{"id", "ok": false, "code", "message"}`,
 * `code` being a Connect error code). Requests run on their own threads, so a
 * slow one (a big recursive remove) does not hold up a Stat; responses carry
 * the request id. The first line written is `{"ready": true}`.
 */
export const filesystemHelperSource = String.raw`
import errno, grp, json, os, pwd, shutil, stat, sys, threading

_output = sys.stdout.buffer
_output_lock = threading.Lock()


def _send(message):
    data = (json.dumps(message) + "\n").encode("utf-8")
    with _output_lock:
        _output.write(data)
        _output.flush()


class _Failure(Exception):
    def __init__(self, code, message):
        Exception.__init__(self, message)
        self.code = code
        self.message = message


def _text(value):
    # Names that are not valid UTF-8 are shown with replacement characters (as the exec-based path did).
    return os.fsencode(value).decode("utf-8", "replace")


def _os_failure(error, path):
    message = "%s: %s" % (error.strerror or str(error), path)
    if error.errno in (errno.EACCES, errno.EPERM):
        return _Failure("permission_denied", message)
    if error.errno == errno.ENOENT:
        return _Failure("not_found", message)
    return _Failure("internal", message)


def _missing(path):
    return _Failure("not_found", "no such file or directory: %s" % path)


_owner_names = {}
_group_names = {}


def _owner(uid):
    if uid not in _owner_names:
        try:
            _owner_names[uid] = pwd.getpwuid(uid).pw_name
        except KeyError:
            _owner_names[uid] = str(uid)
    return _owner_names[uid]


def _group(gid):
    if gid not in _group_names:
        try:
            _group_names[gid] = grp.getgrgid(gid).gr_name
        except KeyError:
            _group_names[gid] = str(gid)
    return _group_names[gid]


def _resolve(path):
    # filepath.EvalSymlinks: the fully resolved path, or OSError when a component is missing (or a loop).
    try:
        return os.path.realpath(path, strict=True)
    except TypeError:  # Python < 3.10 has no strict mode
        resolved = os.path.realpath(path)
        os.stat(resolved)
        return resolved


def _entry(path, info):
    # Like envd (shared/pkg/filesystem GetEntryInfo): lstat of the path; a symlink is reported with the
    # type and permission bits of what it finally resolves to (unknown, 0, when dangling) and
    # symlinkTarget = the fully resolved path (filepath.EvalSymlinks; the path itself when it cannot resolve).
    mode = info.st_mode
    target = None
    if stat.S_ISLNK(mode):
        try:
            target = _resolve(path)
        except (OSError, RuntimeError):
            target = path
    if target is None:
        kind = 2 if stat.S_ISDIR(mode) else 3 if stat.S_ISLNK(mode) else 1 if stat.S_ISREG(mode) else 0
        bits = mode & 0o777
    else:
        try:
            target_mode = os.stat(target).st_mode
            kind = 2 if stat.S_ISDIR(target_mode) else 1 if stat.S_ISREG(target_mode) else 0
            bits = target_mode & 0o777
        except OSError:
            kind = 0
            bits = 0
    entry = {
        "path": _text(path),
        "type": kind,
        "size": str(info.st_size),
        "mode": bits,
        "permissions": stat.filemode(mode),
        "owner": _owner(info.st_uid),
        "group": _group(info.st_gid),
        "modifiedMilliseconds": info.st_mtime_ns // 1000000,
    }
    if target is not None:
        entry["symlinkTarget"] = _text(target)
    return entry


def _lstat_existing(path):
    try:
        return os.lstat(path)
    except OSError:
        raise _missing(path)


def _user_ids(name):
    # envd runs as root and looks the requesting user up for ownership (permissions.GetUserIdInts).
    try:
        record = pwd.getpwnam(name)
    except KeyError:
        raise _Failure("unauthenticated", "invalid username: '%s'" % name)
    return record.pw_uid, record.pw_gid


def _ensure_directories(path, uid, gid):
    # permissions.EnsureDirs: every missing component is created (0755) and given to the user; an existing
    # component that is not a directory fails the call.
    parts = []
    current = path
    while current not in ("/", ""):
        parts.append(current)
        current = os.path.dirname(current)
    for subpath in reversed(parts):
        try:
            info = os.stat(subpath)
        except FileNotFoundError:
            try:
                os.mkdir(subpath, 0o755)
            except FileExistsError:
                pass
            except OSError as error:
                raise _Failure("internal", "failed to create directory: %s" % error)
            try:
                os.chown(subpath, uid, gid)
            except OSError as error:
                raise _Failure("internal", "failed to chown directory: %s" % error)
            continue
        except OSError as error:
            raise _Failure("internal", "failed to stat directory: %s" % error)
        if not stat.S_ISDIR(info.st_mode):
            raise _Failure("internal", "path is a file: %s" % subpath)


def _stat(request):
    path = request["path"]
    return _entry(path, _lstat_existing(path))


def _list(request):
    # envd ListDir: the requested path is resolved through symlinks, must be a directory, and is walked in
    # lexical order (filepath.WalkDir, depth first, symlinks below it not followed); paths are reported
    # under the requested path.
    requested = request["path"]
    depth = max(1, int(request.get("depth") or 1))
    try:
        resolved = _resolve(requested)
    except (OSError, RuntimeError):
        raise _Failure("not_found", "path not found: %s" % requested)
    if not os.path.isdir(resolved):
        raise _Failure("invalid_argument", "path is not a directory: %s" % resolved)
    entries = []

    def walk(directory, reported, level):
        try:
            names = sorted(os.listdir(directory), key=os.fsencode)
        except OSError as error:
            raise _Failure("internal", "error reading directory %s: %s" % (resolved, error))
        for name in names:
            child_path = os.path.join(directory, name)
            try:
                info = os.lstat(child_path)
            except FileNotFoundError:
                continue  # removed meanwhile
            except OSError as error:
                raise _Failure("internal", "error reading directory %s: %s" % (resolved, error))
            entry = _entry(child_path, info)
            entry["path"] = _text(os.path.join(reported, name))
            entries.append(entry)
            if level < depth and stat.S_ISDIR(info.st_mode):
                walk(child_path, os.path.join(reported, name), level + 1)

    walk(resolved, requested, 1)
    return entries


def _make_directory(request):
    path = request["path"]
    try:
        info = os.stat(path)
    except FileNotFoundError:
        info = None
    except OSError as error:
        raise _Failure("internal", "error getting file info: %s" % error)
    if info is not None:
        if stat.S_ISDIR(info.st_mode):
            raise _Failure("already_exists", "directory already exists: %s" % path)
        raise _Failure("invalid_argument", "path already exists but it is not a directory: %s" % path)
    uid, gid = _user_ids(request["user"])
    _ensure_directories(path, uid, gid)
    return _entry(path, _lstat_existing(path))


def _move(request):
    source = request["source"]
    destination = request["destination"]
    uid, gid = _user_ids(request["user"])
    _ensure_directories(os.path.dirname(destination), uid, gid)
    try:
        os.rename(source, destination)
    except FileNotFoundError as error:
        raise _Failure("not_found", "source file not found: %s" % error)
    except OSError as error:
        raise _Failure("internal", "error renaming: %s" % error)
    return _entry(destination, _lstat_existing(destination))


def _remove(request):
    # os.RemoveAll: recursive, and a missing path is not an error.
    path = request["path"]
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return {}
    except OSError as error:
        raise _Failure("internal", "error removing file or directory: %s" % error)
    try:
        if stat.S_ISDIR(info.st_mode):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError as error:
        raise _Failure("internal", "error removing file or directory: %s" % error)
    return {}


_operations = {"stat": _stat, "list": _list, "mkdir": _make_directory, "move": _move, "remove": _remove}


def _handle(request):
    identifier = request.get("id")
    try:
        operation = _operations.get(request.get("op"))
        if operation is None:
            raise _Failure("unimplemented", "unknown operation %r" % request.get("op"))
        _send({"id": identifier, "ok": True, "result": operation(request)})
    except _Failure as failure:
        _send({"id": identifier, "ok": False, "code": failure.code, "message": failure.message})
    except BaseException as error:
        _send({"id": identifier, "ok": False, "code": "internal", "message": "%s: %s" % (type(error).__name__, error)})


_send({"ready": True, "pid": os.getpid()})
for _line in sys.stdin.buffer:
    _line = _line.strip()
    if not _line:
        continue
    _request = json.loads(_line.decode("utf-8"))
    threading.Thread(target=_handle, args=(_request,), daemon=True).start()
`;
