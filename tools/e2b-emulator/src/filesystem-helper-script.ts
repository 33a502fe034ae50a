/**
 * Source of the Python filesystem helper: one long-lived process per sandbox
 * per user (a docker exec running as that user), answering envd filesystem
 * requests with plain syscalls instead of one `docker exec` each, like real
 * envd does. Protocol: one JSON request per line on stdin
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


def _entry(path, info):
    # lstat semantics: a symlink is described itself, with its target.
    mode = info.st_mode
    kind = 2 if stat.S_ISDIR(mode) else 3 if stat.S_ISLNK(mode) else 1
    entry = {
        "path": _text(path),
        "type": kind,
        "size": str(info.st_size),
        "mode": mode & 0o7777,
        "permissions": stat.filemode(mode),
        "owner": _owner(info.st_uid),
        "group": _group(info.st_gid),
        "modifiedMilliseconds": info.st_mtime_ns // 1000000,
    }
    if kind == 3:
        try:
            target = os.readlink(path)
        except OSError:
            target = ""
        if target:
            entry["symlinkTarget"] = _text(target)
    return entry


def _lstat_existing(path):
    # Any failure to lstat counts as "does not exist" (like the shell test [ -e ] || [ -L ]).
    try:
        return os.lstat(path)
    except OSError:
        raise _missing(path)


def _stat(request):
    path = request["path"]
    return _entry(path, _lstat_existing(path))


def _list(request):
    path = request["path"]
    depth = max(1, int(request.get("depth") or 1))
    root_info = _lstat_existing(path)
    if not os.path.isdir(path):
        raise _Failure("invalid_argument", "path is not a directory: %s" % path)
    entries = []
    if stat.S_ISLNK(root_info.st_mode):
        # A symlink to a directory lists as empty, as the exec-based path (find -P) always answered.
        return entries

    def walk(directory, level):
        try:
            children = list(os.scandir(directory))
        except OSError as error:
            raise _os_failure(error, directory)
        for child in children:
            child_path = child.path
            try:
                info = child.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue  # removed meanwhile
            except OSError as error:
                raise _os_failure(error, child_path)
            entries.append(_entry(child_path, info))
            if level < depth and stat.S_ISDIR(info.st_mode):
                walk(child_path, level + 1)

    walk(path, 1)
    return entries


def _make_directory(request):
    path = request["path"]
    if os.path.exists(path):
        raise _Failure("already_exists", "path already exists: %s" % path)
    try:
        os.makedirs(path)
    except FileExistsError:
        raise _Failure("already_exists", "path already exists: %s" % path)
    except OSError as error:
        raise _os_failure(error, path)
    return _entry(path, _lstat_existing(path))


def _move(request):
    source = request["source"]
    destination = request["destination"]
    source_info = _lstat_existing(source)
    try:
        parent = os.path.dirname(destination)
        if parent:
            os.makedirs(parent, exist_ok=True)
        try:
            os.rename(source, destination)
        except OSError as error:
            if error.errno != errno.EXDEV:
                raise
            # Another filesystem: copy, then remove the source (what mv does).
            if stat.S_ISDIR(source_info.st_mode):
                shutil.copytree(source, destination, symlinks=True)
                shutil.rmtree(source)
            else:
                shutil.copy2(source, destination, follow_symlinks=False)
                os.unlink(source)
    except OSError as error:
        raise _os_failure(error, "%s -> %s" % (source, destination))
    return _entry(destination, _lstat_existing(destination))


def _remove(request):
    path = request["path"]
    info = _lstat_existing(path)
    try:
        if stat.S_ISDIR(info.st_mode):
            failures = []
            # Like rm -rf: keep removing what can be removed, report the first failure.
            shutil.rmtree(path, onerror=lambda function, failed_path, details: failures.append((details[1], failed_path)))
            if failures:
                error, failed_path = failures[0]
                if isinstance(error, OSError):
                    raise _os_failure(error, failed_path)
                raise _Failure("internal", str(error))
        else:
            os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError as error:
        raise _os_failure(error, path)
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
