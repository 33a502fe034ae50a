/**
 * Core's file helper (ADR 0031): one Python 3 program (standard library only) that performs every file operation
 * inside the sandbox. Every path is resolved one component at a time from an open descriptor of the workspace with
 * `O_NOFOLLOW`: a symbolic link on the way is read with `readlinkat` and followed by the helper itself, only while it
 * stays inside the workspace; nothing is ever resolved by the kernel from a path the sandbox can change in between
 * (no check-then-use gap). Names travel as bytes (hex on the command line, length-prefixed on stdout).
 *
 * `argv`: `op path-hex…` (op: read, write, list, stat, remove, mkdir, rename; `stat path follow` follows a final link
 * inside the workspace, like `final` for read); the workspace from `SBX_WORKSPACE`. It
 * makes itself not dumpable as its first act (`prctl(PR_SET_DUMPABLE, 0)`), which narrows, but cannot close, the
 * window in which a process of the same uid and gid could open its `/proc/<pid>/fd`; an adapter that can start it
 * under a group the sandbox's code is not in (Docker) closes it (ADR 0031).
 *
 * Output (nothing else, nothing after): read `<size>\n` + bytes; stat `sbx-stat <t> <size> <mtime>\n`; list
 * `sbx-list <count>\n` + per entry `<t> <size> <mtime> <name length>\n<name>\n` + `sbx-end\n` (t: f d l o).
 * Exit codes as the shell scripts': 44 not found, 45 is a directory, 46 not a directory, 47 escapes the workspace,
 * 48 not a regular file, 49 no space, 50 other (stderr says why), 51 read-only, 53 the name is not valid.
 */
export const FILE_HELPER_PROGRAM = String.raw`
import os, sys, stat as S, errno
def die(code, why=""):
    if why:
        sys.stderr.write(why + "\n")
    sys.stderr.flush()
    os._exit(code)
def nodump():
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)
    except Exception:
        pass
nodump()
ERRS = {errno.ENOENT: 44, errno.EISDIR: 45, errno.ENOTDIR: 46, errno.ELOOP: 47, errno.ENOSPC: 49, errno.EDQUOT: 49, errno.EROFS: 51, errno.ENAMETOOLONG: 53, errno.ENXIO: 48}
def fail(e):
    if e.errno in (errno.EACCES, errno.EPERM):
        die(50, "permission denied")
    die(ERRS.get(e.errno, 50), "" if e.errno in ERRS else os.strerror(e.errno))
op = sys.argv[1]
W = os.environb[b"SBX_WORKSPACE"]
ARGS = [bytes.fromhex(a) for a in sys.argv[2:]]
DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
def parts(p):
    if p == W:
        return []
    if not p.startswith(W.rstrip(b"/") + b"/"):
        die(47)
    names = p[len(W.rstrip(b"/")) + 1:].split(b"/")
    for n in names:
        if n in (b"", b".", b".."):
            die(53)
    return names
def root():
    try:
        return os.open(W, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as e:
        fail(e)
class Walk:
    # A stack of open directories from the workspace down; ".." pops, never above the workspace.
    def __init__(self):
        self.stack = [root()]
        self.links = 0
    def fd(self):
        return self.stack[-1]
    def up(self):
        if len(self.stack) == 1:
            die(47)
        os.close(self.stack.pop())
    def target(self, name):
        self.links += 1
        if self.links > 40:
            die(47)
        t = os.readlink(name, dir_fd=self.fd())
        if t.startswith(b"/"):
            if t.rstrip(b"/") != W.rstrip(b"/") and not t.startswith(W.rstrip(b"/") + b"/"):
                die(47)
            while len(self.stack) > 1:
                self.up()
            t = t[len(W.rstrip(b"/")):]
        return [n for n in t.split(b"/") if n not in (b"", b".")]
    def enter(self, names, create=False):
        # Descends through names, following links inside the workspace; creates missing folders when asked.
        todo = list(names)
        while todo:
            n = todo.pop(0)
            if n == b"..":
                self.up()
                continue
            try:
                self.stack.append(os.open(n, DIR, dir_fd=self.fd()))
                continue
            except OSError as e:
                err = e
            if err.errno == errno.ENOENT and create:
                try:
                    os.mkdir(n, 0o777, dir_fd=self.fd())
                except FileExistsError:
                    pass
                except OSError as e:
                    fail(e)
                todo.insert(0, n)
                continue
            if err.errno in (errno.ELOOP, errno.ENOTDIR):
                try:
                    st = os.stat(n, dir_fd=self.fd(), follow_symlinks=False)
                except OSError as e:
                    fail(e)
                if S.S_ISLNK(st.st_mode):
                    todo[0:0] = self.target(n)
                    continue
                die(46)
            fail(err)
    def parent(self, path, create=False):
        names = parts(path)
        if not names:
            return None
        self.enter(names[:-1], create)
        return names[-1]
    def final(self, name):
        # Resolves a final name that may be a link (followed inside the workspace): returns (dir fd, name).
        while True:
            try:
                st = os.stat(name, dir_fd=self.fd(), follow_symlinks=False)
            except OSError as e:
                fail(e)
            if not S.S_ISLNK(st.st_mode):
                return name
            names = self.target(name)
            if not names:
                return None
            self.enter(names[:-1])
            name = names[-1]
            if name == b"..":
                self.up()
                return None
def kind(m):
    return b"f" if S.S_ISREG(m) else b"d" if S.S_ISDIR(m) else b"l" if S.S_ISLNK(m) else b"o"
def describe(st):
    return kind(st.st_mode) + b" %d %d" % (st.st_size, int(st.st_mtime))
out = sys.stdout.buffer
def do_read():
    w = Walk()
    name = w.parent(ARGS[0])
    if name is not None:
        name = w.final(name)
    fd = None
    while fd is None:
        if name is None:
            die(45)
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=w.fd())
        except OSError as e:
            if e.errno != errno.ELOOP:
                fail(e)
            name = w.final(name)
    st = os.fstat(fd)
    if S.S_ISDIR(st.st_mode):
        die(45)
    if not S.S_ISREG(st.st_mode):
        die(48)
    out.write(b"%d\n" % st.st_size)
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError as e:
            fail(e)
        if not chunk:
            break
        out.write(chunk)
    out.flush()
def do_write():
    w = Walk()
    name = w.parent(ARGS[0], create=True)
    if name is None:
        die(45)
    try:
        st = os.stat(name, dir_fd=w.fd(), follow_symlinks=False)
        if S.S_ISDIR(st.st_mode):
            die(45)
    except FileNotFoundError:
        pass
    except OSError as e:
        fail(e)
    tmp = b".sbx-upload-" + ARGS[1]
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666, dir_fd=w.fd())
    except OSError as e:
        fail(e)
    n = 0
    try:
        src = sys.stdin.buffer.raw
        while True:
            chunk = src.read(65536)
            if not chunk:
                break
            view = memoryview(chunk)
            while view:
                k = os.write(fd, view)
                view = view[k:]
                n += k
        os.close(fd)
        if ARGS[2] and n != int(ARGS[2]):
            os.unlink(tmp, dir_fd=w.fd())
            die(50, "the sandbox received %d of %s bytes; nothing was written" % (n, ARGS[2].decode()))
        os.rename(tmp, name, src_dir_fd=w.fd(), dst_dir_fd=w.fd())
    except OSError as e:
        try:
            os.unlink(tmp, dir_fd=w.fd())
        except OSError:
            pass
        fail(e)
def do_list():
    w = Walk()
    w.enter(parts(ARGS[0]))
    rows = []
    for n in os.listdir(w.fd()):
        n = os.fsencode(n)
        try:
            st = os.stat(n, dir_fd=w.fd(), follow_symlinks=False)
        except FileNotFoundError:
            continue
        except OSError as e:
            fail(e)
        rows.append(describe(st) + b" %d\n" % len(n) + n + b"\n")
    out.write(b"sbx-list %d\n" % len(rows) + b"".join(rows) + b"sbx-end\n")
    out.flush()
def do_stat():
    w = Walk()
    name = w.parent(ARGS[0])
    if name is not None and ARGS[1:] == [b"follow"]:
        name = w.final(name)
    try:
        st = os.stat(name if name is not None else b".", dir_fd=w.fd(), follow_symlinks=False)
    except OSError as e:
        fail(e)
    out.write(b"sbx-stat " + describe(st) + b"\n")
    out.flush()
def remove_tree(dfd, name):
    try:
        fd = os.open(name, DIR, dir_fd=dfd)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR):
            os.unlink(name, dir_fd=dfd)
            return
        raise
    try:
        for n in os.listdir(fd):
            n = os.fsencode(n)
            st = os.stat(n, dir_fd=fd, follow_symlinks=False)
            if S.S_ISDIR(st.st_mode):
                remove_tree(fd, n)
            else:
                os.unlink(n, dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=dfd)
def do_remove():
    w = Walk()
    name = w.parent(ARGS[0])
    if name is None:
        die(45)
    try:
        st = os.stat(name, dir_fd=w.fd(), follow_symlinks=False)
        if S.S_ISDIR(st.st_mode):
            if ARGS[1] != b"recursive":
                die(45)
            remove_tree(w.fd(), name)
        else:
            os.unlink(name, dir_fd=w.fd())
    except OSError as e:
        fail(e)
def do_mkdir():
    w = Walk()
    w.enter(parts(ARGS[0]), create=True)
def do_rename():
    a = Walk()
    src = a.parent(ARGS[0])
    b = Walk()
    dst = b.parent(ARGS[1])
    if src is None or dst is None:
        die(46)
    try:
        st = os.stat(src, dir_fd=a.fd(), follow_symlinks=False)
        try:
            to = os.stat(dst, dir_fd=b.fd(), follow_symlinks=False)
            if S.S_ISDIR(to.st_mode) and not S.S_ISDIR(st.st_mode):
                die(45)
        except FileNotFoundError:
            pass
        os.rename(src, dst, src_dir_fd=a.fd(), dst_dir_fd=b.fd())
    except OSError as e:
        if e.errno == errno.EXDEV:
            die(50, "cannot move between file systems")
        fail(e)
{"read": do_read, "write": do_write, "list": do_list, "stat": do_stat, "remove": do_remove, "mkdir": do_mkdir, "rename": do_rename}[op]()
sys.stdout.flush()
os._exit(0)
`;

/**
 * The `sh` wrapper that starts the file helper: `python3` in isolated mode (`-I -S`: no environment variables, no
 * user or site packages, no script folder on the path), or exit 52 when the image has no `python3` (ADR 0031: refused
 * with a typed error, never a weaker fallback). `$1` the program, then the helper's arguments.
 */
export const FILE_HELPER_WRAPPER =
  'command -v python3 >/dev/null 2>&1 || { echo "core\'s file helper needs python3 in the sandbox image" >&2; exit 52; }; p=$1; shift; exec python3 -I -S -c "$p" "$@"';
