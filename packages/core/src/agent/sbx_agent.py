# The sbx sandbox agent, protocol 1. Python 3.8+ standard library only. See docs/agent-protocol.md and adr/0016.
# Started as `python3 -I -u -c <this source>`: nothing is written to the sandbox's disk.
import os, sys

if sys.version_info < (3, 8):
    sys.stderr.write("sbx-agent: python3 >= 3.8 is required, found %d.%d\n" % sys.version_info[:2])
    sys.exit(3)

# Until prctl(PR_SET_DUMPABLE, 0) below, processes of the same uid could ptrace this one: keep that window to Python's
# start-up plus three small imports and one fork (adr/0025). The zygote is forked here, before the agent reads any
# request, so that it can set its audit tag (/proc/self/loginuid is writable by the process only while it is
# dumpable) and every interpreter inherits that tag; the agent itself keeps its loginuid unset, so every command it
# starts can set its own tag (the kernel lets an unset process set it once; a set one can never change it again).
import ctypes, signal, socket

AUDIT_UNSET = "4294967295"
INTERPRETER_TAG = os.environ.pop("SBX_AGENT_INTERPRETER_TAG", "")
AGENT_END, ZYGOTE_END = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
ZYGOTE_PID = os.fork()
if ZYGOTE_PID == 0 and INTERPRETER_TAG:
    try:
        with open("/proc/self/loginuid", "w") as _handle:
            _handle.write(INTERPRETER_TAG)
    except OSError:
        pass


def make_undumpable():
    # Non-dumpable: processes of the same uid can no longer ptrace this one, read its memory or environ, or open
    # its /proc/<pid>/fd/* (so they cannot write forged frames into its pipes). Inherited across fork.
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0) == 0
    except Exception:
        return False


UNDUMPABLE = make_undumpable()


def traced():
    # A process that attached before the prctl above stays attached: refuse to serve under a tracer.
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith("TracerPid:"):
                    return line.split()[1] != "0"
    except (OSError, IndexError):
        pass
    return False


if traced():
    sys.stderr.write("sbx-agent: refusing to start under a tracer\n")
    os._exit(4)


def own_loginuid():
    try:
        with open("/proc/self/loginuid") as handle:
            return handle.read().strip()
    except OSError:
        return None


import array, ast, base64, builtins, io, json, linecache, selectors, shlex, struct, subprocess, time, traceback, types

PROTOCOL = 1
AGENT_VERSION = "0.1.0"
MAX_FRAME = 64 * 1024 * 1024
CHUNK = 65536
MAX_RESULT_BYTES = 16 * 1024 * 1024


def die_with_parent():
    # PR_SET_PDEATHSIG(SIGKILL): this process is killed the moment its parent dies, so the zygote ends with the agent
    # and every interpreter with the zygote, whoever kills the agent and however (even SIGKILL of a stopped agent).
    try:
        import ctypes
        parent = os.getppid()
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(0)
    except Exception:
        pass


def encode_frame(header, body=b""):
    head = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return struct.pack(">II", 4 + len(head) + len(body), len(head)) + head + body


class FrameReader(object):
    def __init__(self):
        self.buffer = bytearray()

    def feed(self, data):
        self.buffer += data
        frames = []
        while len(self.buffer) >= 8:
            total, head_length = struct.unpack(">II", bytes(self.buffer[:8]))
            if total > MAX_FRAME or head_length > total - 4:
                raise ValueError("bad frame length")
            if len(self.buffer) < 4 + total:
                break
            head = bytes(self.buffer[8:8 + head_length])
            body = bytes(self.buffer[8 + head_length:4 + total])
            del self.buffer[:4 + total]
            header = json.loads(head.decode("utf-8"))
            if not isinstance(header, dict):
                raise ValueError("a frame header must be an object")
            frames.append((header, body))
        return frames


def write_all(fd, data):
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def write_without_sigpipe(fd, data):
    # The agent keeps SIGPIPE's default (it dies when the host is gone), so a write to a command's stdin after the
    # command closed it would kill the agent with every command and interpreter in it (exit 141: seen on
    # apple-container, adr/0052). Blocked for this write, the signal stays pending and is taken back before the
    # unblock; the write fails with EPIPE instead, which drops that command's input only.
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGPIPE])
    try:
        return os.write(fd, data)
    finally:
        signal.sigtimedwait([signal.SIGPIPE], 0)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGPIPE])


def send_fds(sock, message, fds):
    sock.sendmsg([message], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])


def receive_fds(sock, size, count):
    fds = array.array("i")
    message, ancillary, _flags, _address = sock.recvmsg(size, socket.CMSG_LEN(count * fds.itemsize))
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[:len(data) - (len(data) % fds.itemsize)])
    return message, list(fds)


# ---------------------------------------------------------------------------------------------------------------
# Worker: one interpreter (a context, or a one-shot run). Forked from the zygote, never from the agent, so it holds
# nothing another context sent. fds: 0 /dev/null, 1 and 2 its own output pipes, control_in/control_out frames.

MIME_METHODS = (
    ("_repr_html_", "text/html"),
    ("_repr_markdown_", "text/markdown"),
    ("_repr_svg_", "image/svg+xml"),
    ("_repr_png_", "image/png"),
    ("_repr_jpeg_", "image/jpeg"),
    ("_repr_json_", "application/json"),
    ("_repr_latex_", "text/latex"),
    ("_repr_javascript_", "application/javascript"),
)
BINARY_MIME = ("image/png", "image/jpeg")


def mime_value(mime, value):
    if isinstance(value, tuple) and len(value) == 2:
        value = value[0]
    if value is None:
        return None
    if mime in BINARY_MIME:
        if isinstance(value, (bytes, bytearray, memoryview)):
            return base64.b64encode(bytes(value)).decode("ascii")
        return str(value)
    if mime == "application/json":
        return value if isinstance(value, str) else json.dumps(value)
    return value if isinstance(value, str) else str(value)


def figure_png(value):
    try:
        buffer = io.BytesIO()
        value.savefig(buffer, format="png", bbox_inches="tight")
        return base64.b64encode(buffer.getvalue()).decode("ascii")
    except Exception:
        return None


def is_figure(value):
    kind = type(value)
    return kind.__name__ == "Figure" and kind.__module__.startswith("matplotlib")


def mime_bundle(value):
    try:
        data = {"text/plain": repr(value)}
    except Exception as error:
        data = {"text/plain": "<repr() failed: %s>" % type(error).__name__}
    if isinstance(value, type):
        return data
    bundle_method = getattr(value, "_repr_mimebundle_", None)
    if callable(bundle_method):
        try:
            bundle = bundle_method()
            if isinstance(bundle, tuple):
                bundle = bundle[0]
            if isinstance(bundle, dict):
                for mime, item in bundle.items():
                    converted = mime_value(str(mime), item)
                    if converted is not None:
                        data[str(mime)] = converted
        except Exception:
            pass
    for method_name, mime in MIME_METHODS:
        if mime in data:
            continue
        method = getattr(value, method_name, None)
        if not callable(method):
            continue
        try:
            converted = mime_value(mime, method())
        except Exception:
            continue
        if converted is not None:
            data[mime] = converted
    if is_figure(value) and "image/png" not in data:
        png = figure_png(value)
        if png is not None:
            data["image/png"] = png
    return data


def worker_main(stdout_fd, stderr_fd, control_in, control_out):
    os.setsid()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(stdout_fd, 1)
    os.dup2(stderr_fd, 2)
    for fd in (null, stdout_fd, stderr_fd):
        if fd > 2:
            os.close(fd)
    for fd in (control_in, control_out):
        os.set_inheritable(fd, False)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", errors="backslashreplace", write_through=True)
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8", errors="backslashreplace", write_through=True)
    sys.__stdout__, sys.__stderr__, sys.__stdin__ = sys.stdout, sys.stderr, sys.stdin
    state = {"running": False, "cells": 0}

    def on_interrupt(_number, _frame):
        if state["running"]:
            raise KeyboardInterrupt()

    signal.signal(signal.SIGINT, on_interrupt)

    def send(header):
        write_all(control_out, encode_frame(header))

    def send_result(data, main):
        # A result over the agent's cap is never framed (a frame past MAX_FRAME would end the interpreter as
        # malformed): only its size goes to the agent, which counts it as dropped so the run reports truncation.
        size = sum(len(str(value)) for value in data.values())
        if size > MAX_RESULT_BYTES:
            send({"type": "result", "main": main, "dropped_size": size})
        else:
            send({"type": "result", "main": main, "data": data})

    def publish(value, main):
        send_result(mime_bundle(value), main)

    def display(*values, **_options):
        for value in values:
            publish(value, False)

    builtins.display = display
    os.environ.setdefault("MPLBACKEND", "Agg")
    module = types.ModuleType("__main__")
    module.__dict__["__builtins__"] = builtins
    module.__dict__["display"] = display
    sys.modules["__main__"] = module
    sys.argv = ["<code>"]
    sys.path.insert(0, "")
    namespace = module.__dict__
    reader = FrameReader()

    def publish_open_figures():
        pyplot = sys.modules.get("matplotlib.pyplot")
        if pyplot is None:
            return
        try:
            for number in pyplot.get_fignums():
                figure = pyplot.figure(number)
                png = figure_png(figure)
                if png is not None:
                    send_result({"text/plain": repr(figure), "image/png": png}, False)
            pyplot.close("all")
        except Exception:
            pass

    def run(message):
        state["cells"] += 1
        filename = "<cell-%d>" % state["cells"]
        code = message.get("code", "")
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        env = message.get("env") or {}
        for name, value in env.items():
            os.environ[str(name)] = str(value)
        if message.get("cwd"):
            try:
                os.chdir(message["cwd"])
            except OSError:
                pass
        error = None
        last_value = None
        has_value = False
        state["running"] = True
        try:
            tree = ast.parse(code, filename, "exec")
            last = None
            if tree.body and isinstance(tree.body[-1], ast.Expr):
                last = tree.body.pop()
            exec(compile(tree, filename, "exec"), namespace)
            if last is not None:
                last_value = eval(compile(ast.Expression(body=last.value), filename, "eval"), namespace)
                has_value = True
        except BaseException as exception:
            state["running"] = False
            if isinstance(exception, SystemExit) and (exception.code is None or exception.code == 0):
                error = None
            else:
                error = describe_error(exception)
        finally:
            state["running"] = False
        try:
            if error is None and has_value and last_value is not None:
                namespace["_"] = last_value
                if is_figure(last_value):
                    try:
                        sys.modules["matplotlib.pyplot"].close(last_value)
                    except Exception:
                        pass
                publish(last_value, True)
            publish_open_figures()
        except BaseException as exception:
            if error is None:
                error = describe_error(exception)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        send({"type": "done", "error": error})

    def describe_error(exception):
        # Frames of this program ("<string>") and of the compiler are not the user's: leave them out.
        frames = [frame for frame in traceback.extract_tb(exception.__traceback__)
                  if frame.filename != "<string>" and not frame.filename.endswith(os.sep + "ast.py")]
        lines = []
        if frames:
            lines.append("Traceback (most recent call last):\n")
            lines.extend(traceback.format_list(frames))
        lines.extend(traceback.format_exception_only(type(exception), exception))
        text = "".join(lines)
        try:
            sys.stderr.write(text)
            sys.stderr.flush()
        except Exception:
            pass
        try:
            value = str(exception)
        except Exception:
            value = "<str() failed>"
        return {"name": type(exception).__name__, "value": value, "traceback": text}

    while True:
        try:
            data = os.read(control_in, CHUNK)
        except KeyboardInterrupt:
            continue
        if not data:
            os._exit(0)
        for header, _body in reader.feed(data):
            if header.get("type") == "run":
                run(header)
            elif header.get("type") == "init":
                try:
                    os.chdir(header.get("cwd") or ".")
                except OSError:
                    pass


# ---------------------------------------------------------------------------------------------------------------
# Zygote: forked before the agent reads a single request; forks workers on demand. Its memory never holds a request.

def zygote_main(sock):
    die_with_parent()
    for fd in (0, 1, 2):
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, fd)
        os.close(null)
    children = set()

    def reap(_number=None, _frame=None):
        while children:
            try:
                pid, _status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                children.clear()
                return
            if pid == 0:
                return
            children.discard(pid)

    signal.signal(signal.SIGCHLD, reap)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            message, fds = receive_fds(sock, 16, 4)
        except OSError:
            message, fds = b"", []
        if not message or len(fds) != 4:
            for pid in list(children):
                try:
                    os.killpg(pid, signal.SIGKILL)
                except OSError:
                    pass
            os._exit(0)
        pid = os.fork()
        if pid == 0:
            try:
                sock.close()
                die_with_parent()
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                worker_main(*fds)
            finally:
                os._exit(70)
        for fd in fds:
            os.close(fd)
        children.add(pid)
        sock.sendall(struct.pack(">i", pid))


# ---------------------------------------------------------------------------------------------------------------
# Agent: the only process that talks to the host.

class Worker(object):
    def __init__(self, agent, context_id, cwd):
        self.agent = agent
        self.context_id = context_id
        stdout_read, stdout_write = os.pipe()
        stderr_read, stderr_write = os.pipe()
        in_read, in_write = os.pipe()
        out_read, out_write = os.pipe()
        child_ends = [stdout_write, stderr_write, in_read, out_write]
        try:
            send_fds(agent.zygote, b"F", child_ends)
            answer = b""
            while len(answer) < 4:
                part = agent.zygote.recv(4 - len(answer))
                if not part:
                    raise OSError("the zygote exited")
                answer += part
            self.pid = struct.unpack(">i", answer)[0]
        finally:
            for fd in child_ends:
                os.close(fd)
        self.stdout = stdout_read
        self.stderr = stderr_read
        self.control_in = in_write
        self.control_out = out_read
        self.reader = FrameReader()
        self.current = None
        self.queue = []
        self.lost = None
        for fd, kind in ((self.stdout, "stdout"), (self.stderr, "stderr"), (self.control_out, "control")):
            os.set_blocking(fd, False)
            agent.selector.register(fd, selectors.EVENT_READ, (self, kind))
        if cwd:
            write_all(self.control_in, encode_frame({"type": "init", "cwd": cwd}))

    def start(self, run):
        self.current = run
        run.started = True
        self.oom_kills = read_oom_kills()
        if run.deadline is not None:
            run.deadline_at = time.monotonic() + run.deadline / 1000.0
        try:
            write_all(self.control_in, encode_frame({"type": "run", "code": run.code, "env": run.env, "cwd": run.cwd}))
        except OSError:
            self.kill("the interpreter exited")

    def drain(self, fd, kind):
        while True:
            try:
                data = os.read(fd, CHUNK)
            except BlockingIOError:
                return True
            except OSError:
                data = b""
            if not data:
                return False
            if self.current is not None:
                self.current.output(kind, data)

    def on_readable(self, fd, kind):
        if kind != "control":
            if not self.drain(fd, kind):
                self.agent.selector.unregister(fd)
            return
        try:
            data = os.read(fd, CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            before = getattr(self, "oom_kills", None)
            after = read_oom_kills() if before is not None else None
            if after is not None and after > before:
                self.kill(OOM_REASON)
            else:
                self.kill("the interpreter exited")
            return
        try:
            frames = self.reader.feed(data)
        except Exception:
            self.kill("the interpreter sent a malformed frame")
            return
        for header, _body in frames:
            if self.lost is not None:
                return
            kind_of = header.get("type")
            if kind_of == "result" and self.current is not None:
                self.current.result(header)
            elif kind_of == "done" and self.current is not None:
                self.drain(self.stdout, "stdout")
                self.drain(self.stderr, "stderr")
                run = self.current
                self.current = None
                error = header.get("error")
                run.finish(error if isinstance(error, dict) else None, None)
                self.after_run()

    def after_run(self):
        if self.context_id is None:
            self.kill(None)
        elif self.queue:
            self.start(self.queue.pop(0))

    def interrupt(self):
        try:
            os.kill(self.pid, signal.SIGINT)
        except OSError:
            pass

    def kill(self, reason):
        """Ends the interpreter. `reason` None: a one-shot run that finished normally (nothing pending)."""
        if self.lost is not None:
            return
        self.lost = reason or "finished"
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except OSError:
            pass
        if reason is not None:
            sweep_session(self.pid)
        for fd in (self.stdout, self.stderr, self.control_out):
            try:
                self.agent.selector.unregister(fd)
            except (KeyError, ValueError):
                pass
        if self.current is not None:
            self.drain(self.stdout, "stdout")
            self.drain(self.stderr, "stderr")
        for fd in (self.stdout, self.stderr, self.control_out, self.control_in):
            try:
                os.close(fd)
            except OSError:
                pass
        pending = ([self.current] if self.current is not None else []) + self.queue
        self.current = None
        self.queue = []
        if reason is not None:
            for run in pending:
                run.finish(None, reason)
            if self.context_id is not None:
                self.agent.send({"type": "context_lost", "context": self.context_id, "reason": reason})
        self.agent.forget(self)


OOM_REASON = "the interpreter was killed by the out-of-memory killer (the sandbox's memory limit was reached)"


def read_oom_kills():
    # The sandbox cgroup's out-of-memory kill counter (cgroup v1 or v2), or None where it cannot be read.
    for path in ("/sys/fs/cgroup/memory/memory.oom_control", "/sys/fs/cgroup/memory.events"):
        try:
            with open(path) as handle:
                for line in handle:
                    if line.startswith("oom_kill "):
                        return int(line.split()[1])
        except (OSError, ValueError):
            continue
    return None


# Whether this sandbox's out-of-memory kill counter can be read; without it the agent cannot tell (oom: null).
OOM_KILLS_READABLE = read_oom_kills() is not None


def sweep_session(session):
    # Kills processes left in the worker's session (a double fork keeps the session even with a new group).
    try:
        entries = os.listdir("/proc")
    except OSError:
        return
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry, "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
            if int(fields[3]) == session:
                os.kill(int(entry), signal.SIGKILL)
        except (OSError, IndexError, ValueError):
            pass


class Run(object):
    def __init__(self, agent, request, one_shot):
        self.agent = agent
        self.id = request["id"]
        self.code = str(request.get("code", ""))
        self.env = dict((str(k), str(v)) for k, v in (request.get("env") or {}).items())
        # A context keeps its own working directory between runs (as a notebook does); a one-shot run starts in cwd.
        self.cwd = request.get("cwd") if one_shot else None
        deadline = request.get("deadline_ms")
        self.deadline = deadline if isinstance(deadline, (int, float)) and deadline > 0 else None
        self.deadline_at = None
        limit = request.get("output_limit_bytes")
        self.limit = limit if isinstance(limit, int) and limit >= 0 else 16 * 1024 * 1024
        self.grace = request.get("grace_ms") if isinstance(request.get("grace_ms"), int) else 2000
        self.sent = {"stdout": 0, "stderr": 0, "results": 0}
        self.dropped = {"stdout": 0, "stderr": 0, "results": 0}
        self.stop_reason = None
        self.kill_at = None
        self.started = False
        self.finished = False
        self.worker = None

    def output(self, kind, data):
        room = self.limit - self.sent[kind]
        if room <= 0:
            self.dropped[kind] += len(data)
            return
        kept = data[:room]
        self.dropped[kind] += len(data) - len(kept)
        self.sent[kind] += len(kept)
        self.agent.send({"type": kind, "id": self.id}, kept)

    def result(self, header):
        # A result dropped is counted, never lost silently: `done` reports the count and the run says truncated.
        if "dropped_size" in header:
            self.dropped["results"] += 1
            return
        data = header.get("data")
        if not isinstance(data, dict):
            self.dropped["results"] += 1
            return
        size = sum(len(str(value)) for value in data.values())
        if self.sent["results"] + size > MAX_RESULT_BYTES:
            self.dropped["results"] += 1
            return
        self.sent["results"] += size
        self.agent.send({"type": "result", "id": self.id, "main": header.get("main") is True, "data": dict((str(k), str(v)) for k, v in data.items())})

    def stop(self, reason):
        if self.finished or self.stop_reason is not None:
            return
        self.stop_reason = reason
        if not self.started:
            self.finish(None, None)
            return
        self.worker.interrupt()
        self.kill_at = time.monotonic() + self.grace / 1000.0

    def finish(self, error, lost):
        if self.finished:
            return
        self.finished = True
        self.agent.runs.pop(self.id, None)
        status = self.stop_reason or "ok"
        self.agent.send({"type": "done", "id": self.id, "status": status, "error": error, "lost": lost, "oom": (lost == OOM_REASON) if OOM_KILLS_READABLE else None, "dropped": self.dropped})


def set_window_size(fd, size):
    import fcntl, termios
    rows = max(1, min(int(size.get("rows", 24)), 10000))
    cols = max(1, min(int(size.get("cols", 80)), 10000))
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


def take_controlling_terminal():
    # Runs in the child after setsid (start_new_session): its stdin, the terminal, becomes its controlling terminal.
    # The agent ignores SIGINT, and an ignored signal stays ignored across exec: Ctrl-C on the terminal must work.
    import fcntl, termios
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def default_interrupt():
    # Runs in a command's child before exec: the agent ignores SIGINT, and an ignored signal stays ignored across exec,
    # so without this every command would start deaf to SIGINT (a Ctrl-C or `kill -INT` would not end it; adr/0054).
    signal.signal(signal.SIGINT, signal.SIG_DFL)


PR_SET_CHILD_SUBREAPER = 36
_subreaper_libc = []


def subreaper_setter():
    # A backend that kills by process id instead of audit tag asks for this (adr/0051): the command's shell becomes a
    # child subreaper (kept across exec), so while it lives a double-forked or setsid'd descendant is re-parented to it,
    # not to PID 1, and stays in the tree the backend's kill walks. libc is loaded here, in the agent, not in the child.
    if not _subreaper_libc:
        _subreaper_libc.append(ctypes.CDLL(None, use_errno=True))
    libc = _subreaper_libc[0]

    def become_subreaper():
        if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER) failed")
    return become_subreaper


def tagged_script(tag, cwd, command):
    # The command's own shell first sets its audit tag (dumpable again after exec, it may write its own loginuid),
    # then runs the command in the same shell: one exec, `$0` and the positional parameters as with `sh -c command`.
    # Everything is on the command's first line, which the shell parses whole before running any of it, so a syntax
    # error there runs nothing at all, tagged or not. If the tag cannot be set, nothing runs (exit 125, said on stderr).
    return ('echo %s 2>/dev/null >/proc/self/loginuid || { echo "sbx-agent: could not set the command\'s audit tag" >&2; exit 125; }; '
            'cd -- %s || exit 126; %s' % (tag, shlex.quote(cwd), command))


class Command(object):
    """A shell command started by the agent (commands through the agent): its own session, raw output forwarded."""

    def __init__(self, agent, request):
        self.agent = agent
        self.id = request["id"]
        env = dict(os.environ)
        for name, value in (request.get("env") or {}).items():
            env[str(name)] = str(value)
        tag = request.get("tag")
        cwd = str(request.get("cwd") or ".")
        command = str(request.get("command", ""))
        if tag is not None and not (isinstance(tag, str) and tag.isdigit()):
            raise ValueError("tag must be a decimal string")
        argv = ["sh", "-c", tagged_script(tag, cwd, command)] if tag else ["sh", "-c", 'cd -- "$1" || exit 126; exec sh -c "$2"', "sbx", cwd, command]
        self.pending_input = bytearray()
        self.close_input = False
        self.readers = {}
        self.terminal = None
        subreaper = subreaper_setter() if request.get("subreaper") else None
        size = request.get("terminal")
        if size is not None:
            # A terminal (adr/0049): the command's stdin, stdout and stderr are one pseudo-terminal, its controlling
            # terminal (a new session); output arrives as `stdout` frames, input through `stdin`, size through `resize`.
            env.setdefault("TERM", "xterm-256color")
            master, slave = os.openpty()
            try:
                set_window_size(slave, size)
                self.process = subprocess.Popen(
                    argv, env=env, stdin=slave, stdout=slave, stderr=slave, start_new_session=True, close_fds=True,
                    preexec_fn=(lambda: (take_controlling_terminal(), subreaper())) if subreaper else take_controlling_terminal)
            except BaseException:
                os.close(master)
                raise
            finally:
                os.close(slave)
            self.terminal = master
            self.stdin = os.dup(master)
            streams = ((master, "stdout"),)
        else:
            self.process = subprocess.Popen(
                argv,
                env=env, stdin=subprocess.PIPE if request.get("stdin") else subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, close_fds=True,
                preexec_fn=(lambda: (default_interrupt(), subreaper())) if subreaper else default_interrupt)
            self.stdin = self.process.stdin.fileno() if self.process.stdin else None
            streams = ((self.process.stdout.fileno(), "stdout"), (self.process.stderr.fileno(), "stderr"))
        for fd, kind in streams:
            os.set_blocking(fd, False)
            self.readers[fd] = kind
            agent.selector.register(fd, selectors.EVENT_READ, (self, kind))
        if self.stdin is not None:
            os.set_blocking(self.stdin, False)
        self.lost = None
        self.finished = False

    def on_readable(self, fd, kind):
        if kind == "stdin":
            self.flush_input()
            return
        self.drain(fd, kind)

    def drain(self, fd, kind):
        while True:
            try:
                data = os.read(fd, CHUNK)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                self.close_reader(fd)
                return
            self.agent.send({"type": kind, "id": self.id}, data)

    def close_reader(self, fd):
        if fd in self.readers:
            del self.readers[fd]
            try:
                self.agent.selector.unregister(fd)
            except (KeyError, ValueError):
                pass

    def write_input(self, data, close):
        if self.stdin is None:
            return
        self.pending_input += data
        self.close_input = self.close_input or close
        self.flush_input()

    def flush_input(self):
        if self.stdin is None:
            return
        while self.pending_input:
            try:
                written = write_without_sigpipe(self.stdin, bytes(self.pending_input[:CHUNK]))
            except BlockingIOError:
                break
            except OSError:
                self.pending_input = bytearray()
                break
            del self.pending_input[:written]
        registered = self.stdin in self.agent.selector.get_map()
        if self.pending_input and not registered:
            self.agent.selector.register(self.stdin, selectors.EVENT_WRITE, (self, "stdin"))
        elif not self.pending_input and registered:
            self.agent.selector.unregister(self.stdin)
        if not self.pending_input and self.close_input and self.terminal is None:
            try:
                self.process.stdin.close()
            except OSError:
                pass
            self.stdin = None

    def kill(self):
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except OSError:
            pass
        sweep_session(self.process.pid)

    def poll(self):
        if self.finished or self.process.poll() is None:
            return
        self.finished = True
        for fd, kind in list(self.readers.items()):
            self.drain(fd, kind)
            self.close_reader(fd)
        if self.stdin is not None:
            try:
                self.agent.selector.unregister(self.stdin)
            except (KeyError, ValueError):
                pass
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        if self.terminal is not None:
            for fd in (self.terminal, self.stdin):
                try:
                    os.close(fd)
                except (OSError, TypeError):
                    pass
            self.stdin = None
        code = self.process.returncode
        self.agent.commands.pop(self.id, None)
        self.agent.send({"type": "exit", "id": self.id, "exit_code": code if code >= 0 else 128 - code})


# --- file watching (adr/0049): inotify through ctypes, confined to the workspace, bounded by the kernel's queue ---
IN_MODIFY, IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x2, 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF, IN_Q_OVERFLOW, IN_IGNORED, IN_ISDIR = 0x400, 0x800, 0x4000, 0x8000, 0x40000000
IN_ONLYDIR, IN_DONT_FOLLOW, IN_EXCL_UNLINK = 0x01000000, 0x02000000, 0x04000000
WATCH_MASK = (IN_MODIFY | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF
              | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK)
MAX_WATCHED_DIRECTORIES = 8192
INOTIFY_EVENT = struct.Struct("iIII")


class WatchRefused(Exception):
    def __init__(self, code, message):
        Exception.__init__(self, message)
        self.code = code


def open_confined_directory(root_fd, parts):
    # Walks `parts` from the workspace one component at a time without following any symbolic link (O_NOFOLLOW on
    # every step), so a path that leads out of the workspace cannot be opened, even if it changes while we walk.
    current = os.dup(root_fd)
    try:
        for part in parts:
            following = os.open(part, os.O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=current)
            os.close(current)
            current = following
        return current
    except BaseException:
        os.close(current)
        raise


class Watch(object):
    """A watched directory tree: one inotify instance, events sent in order, a kernel overflow sent as a marker."""

    def __init__(self, agent, request):
        self.agent = agent
        self.id = request["id"]
        self.recursive = request.get("recursive") is True
        self.lost = None
        libc = ctypes.CDLL(None, use_errno=True)
        self.add_watch = libc.inotify_add_watch
        self.add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        self.remove_watch = libc.inotify_rm_watch
        root = os.fsencode(str(request.get("root") or "/"))
        relative = [part for part in os.fsencode(str(request.get("path") or "")).split(b"/") if part not in (b"", b".")]
        if b".." in relative:
            raise WatchRefused("escapes-workspace", "the path has a .. component")
        self.root_fd = os.open(root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        self.real_parts = self.resolve(root, relative)
        self.fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0:
            os.close(self.root_fd)
            raise WatchRefused("watch-failed", "inotify_init1: %s" % os.strerror(ctypes.get_errno()))
        self.directories = {}
        self.pending_from = None
        self.events = []
        try:
            self.add(())
        except BaseException:
            self.close()
            raise
        if self.recursive:
            self.add_below((), announce=False)
        agent.selector.register(self.fd, selectors.EVENT_READ, (self, "watch"))

    def resolve(self, root, relative):
        # Symbolic links on the path are followed only to somewhere inside the workspace; the walk that opens the
        # directory then follows none (see open_confined_directory).
        real_root = os.path.realpath(root)
        target = os.path.realpath(os.path.join(root, *relative)) if relative else real_root
        if target != real_root and not target.startswith(real_root.rstrip(b"/") + b"/"):
            raise WatchRefused("escapes-workspace", "a symbolic link on the path leads outside the workspace")
        parts = tuple(part for part in target[len(real_root):].split(b"/") if part)
        try:
            os.close(open_confined_directory(self.root_fd, parts))
        except FileNotFoundError:
            raise WatchRefused("not-found", "no such directory")
        except NotADirectoryError:
            raise WatchRefused("not-a-directory", "the path is not a directory")
        except OSError as error:
            raise WatchRefused("escapes-workspace" if error.errno == 40 else "watch-failed", "%s" % error)
        return parts

    def add(self, below):
        if len(self.directories) >= MAX_WATCHED_DIRECTORIES:
            self.events.append({"t": "overflow"})
            return None
        fd = open_confined_directory(self.root_fd, self.real_parts + below)
        try:
            wd = self.add_watch(self.fd, b"/proc/self/fd/%d" % fd, WATCH_MASK & ~IN_DONT_FOLLOW)
        finally:
            os.close(fd)
        if wd < 0:
            error = ctypes.get_errno()
            if not below:
                raise WatchRefused("watch-failed", "inotify_add_watch: %s" % os.strerror(error))
            self.events.append({"t": "overflow"})
            return None
        self.directories[wd] = below
        return wd

    def add_below(self, below, announce):
        # A new directory may have gained entries before its watch was in place: they are reported as created.
        try:
            fd = open_confined_directory(self.root_fd, self.real_parts + below)
        except OSError:
            return
        entries = []
        try:
            readable = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=fd)
            try:
                with os.scandir(readable) as scan:
                    entries = [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in scan]
            finally:
                os.close(readable)
        except OSError:
            pass
        finally:
            os.close(fd)
        for name, is_directory in entries:
            name = os.fsencode(name)
            if announce:
                self.events.append({"t": "create", "p": self.shown(below + (name,)), "d": is_directory})
            if is_directory:
                try:
                    if self.add(below + (name,)) is not None:
                        self.add_below(below + (name,), announce)
                except OSError:
                    pass

    def shown(self, parts):
        return os.fsdecode(b"/".join(parts))

    def on_readable(self, fd, kind):
        while True:
            try:
                data = os.read(self.fd, CHUNK)
            except BlockingIOError:
                break
            except OSError:
                data = b""
            if not data:
                break
            self.parse(data)
            if self.lost is not None:
                return
        self.flush()

    def parse(self, data):
        offset = 0
        while offset + INOTIFY_EVENT.size <= len(data):
            wd, mask, cookie, length = INOTIFY_EVENT.unpack_from(data, offset)
            name = data[offset + INOTIFY_EVENT.size:offset + INOTIFY_EVENT.size + length].rstrip(b"\0")
            offset += INOTIFY_EVENT.size + length
            self.event(wd, mask, cookie, name)
        self.settle_move()

    def settle_move(self):
        if self.pending_from is not None:
            # Moved out of the watched tree: gone from it.
            self.events.append({"t": "remove", "p": self.pending_from[1], "d": self.pending_from[2]})
            self.pending_from = None

    def event(self, wd, mask, cookie, name):
        if mask & IN_Q_OVERFLOW:
            self.settle_move()
            self.events.append({"t": "overflow"})
            return
        below = self.directories.get(wd)
        if mask & IN_IGNORED:
            self.directories.pop(wd, None)
            return
        if below is None:
            return
        if mask & (IN_DELETE_SELF | IN_MOVE_SELF):
            if not below:
                self.settle_move()
                self.end("not-found", "the watched directory was removed or moved away")
            return
        is_directory = bool(mask & IN_ISDIR)
        path = self.shown(below + (name,))
        if mask & IN_MOVED_TO and self.pending_from is not None and self.pending_from[0] == cookie:
            old = self.pending_from
            self.pending_from = None
            self.events.append({"t": "rename", "p": path, "f": old[1], "d": is_directory})
            if is_directory and self.recursive:
                self.rewatch(old[1], below + (name,))
            return
        self.settle_move()
        if mask & IN_MOVED_FROM:
            self.pending_from = (cookie, path, is_directory)
        elif mask & (IN_CREATE | IN_MOVED_TO):
            self.events.append({"t": "create", "p": path, "d": is_directory})
            if is_directory and self.recursive:
                try:
                    if self.add(below + (name,)) is not None:
                        self.add_below(below + (name,), announce=True)
                except OSError:
                    pass
        elif mask & IN_DELETE:
            self.events.append({"t": "remove", "p": path, "d": is_directory})
        elif mask & IN_MODIFY:
            last = self.events[-1] if self.events else None
            if not (last and last.get("t") == "write" and last.get("p") == path):
                self.events.append({"t": "write", "p": path, "d": is_directory})

    def rewatch(self, old_path, new_below):
        # A directory renamed inside the tree keeps its watches; their paths move with it.
        old_prefix = tuple(os.fsencode(old_path).split(b"/"))
        for wd, below in list(self.directories.items()):
            if below[:len(old_prefix)] == old_prefix:
                self.directories[wd] = new_below + below[len(old_prefix):]

    def flush(self):
        if self.events and self.lost is None:
            events, self.events = self.events, []
            # The paths travel in the body as ASCII JSON: a name that is not UTF-8 keeps its bytes (surrogateescape).
            self.agent.send({"type": "watch_events", "id": self.id}, json.dumps(events, separators=(",", ":")).encode("ascii"))

    def end(self, code, message):
        self.flush()
        self.close()
        self.agent.watches.pop(self.id, None)
        self.agent.send({"type": "watch_end", "id": self.id, "code": code, "message": message})

    def close(self):
        if self.lost is not None:
            return
        self.lost = "closed"
        try:
            self.agent.selector.unregister(self.fd)
        except (KeyError, ValueError):
            pass
        for descriptor in (self.fd, self.root_fd):
            try:
                os.close(descriptor)
            except OSError:
                pass


# --- exposed ports (adr/0053): a loopback connection inside, bytes both ways in frames, each direction under credit ---
import errno

PORT_WINDOW = 512 * 1024
MAX_PORT_CONNECTIONS = 256


class PortConnection(object):
    """One TCP connection to 127.0.0.1:port inside the sandbox, carried over the agent's frames (adr/0053).

    Bytes read from the socket go to the host as `port_data` frames, never more than the host's credit (it grants more
    with `port_credit` as its client takes them), so a server that floods is held by the kernel's socket buffers; bytes
    from the host are written as the socket takes them, and the host may send only as many as this side granted (the
    `connected` window, then `port_credit` after each write), so a client that floods is held on the host side.

    A reset from the server (or a failed write) is reported only after the bytes the kernel already queued for reading
    were read and sent: Linux keeps them readable after the reset, and a server that sends then resets has sent them."""

    def __init__(self, agent, request):
        self.agent = agent
        self.id = request["id"]
        self.lost = None
        port = request.get("port")
        window = request.get("window")
        if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535:
            raise ValueError("port must be an integer from 1 to 65535")
        if not isinstance(window, int) or isinstance(window, bool) or not 1 <= window <= 64 * 1024 * 1024:
            raise ValueError("window must be a positive integer")
        if len(agent.ports) >= MAX_PORT_CONNECTIONS:
            raise ValueError("too many port connections (%d)" % MAX_PORT_CONNECTIONS)
        self.credit = window
        self.pending = bytearray()
        self.granted_back = 0
        self.connecting = True
        self.reading = True
        self.host_ended = False
        self.shut = False
        # The socket's error (a reset, a failed write), reported once the bytes queued for reading were sent.
        self.failure = None
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setblocking(False)
        self.fd = self.sock.fileno()
        code = self.sock.connect_ex(("127.0.0.1", port))
        if code not in (0, errno.EINPROGRESS):
            self.sock.close()
            raise OSError(code, os.strerror(code))
        self.registered = 0
        self.interest()

    def interest(self):
        if self.lost is not None:
            return
        events = 0
        if self.connecting or self.pending or (self.host_ended and not self.shut):
            events |= selectors.EVENT_WRITE
        if not self.connecting and self.reading and self.credit > 0:
            events |= selectors.EVENT_READ
        if events == self.registered:
            return
        if self.registered == 0:
            self.agent.selector.register(self.fd, events, (self, "port"))
        elif events == 0:
            self.agent.selector.unregister(self.fd)
        else:
            self.agent.selector.modify(self.fd, events, (self, "port"))
        self.registered = events

    def on_readable(self, fd, kind):
        try:
            self.step()
        except Exception as error:
            self.finish("%s: %s" % (type(error).__name__, error))

    def step(self):
        if self.connecting:
            code = self.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if code in (errno.ECONNRESET, errno.EPIPE):
                # Connected, then reset before this side looked (the server wrote and reset at once): its bytes are
                # still queued here, so the connection is reported and they are read before the reset is.
                self.failure = os.strerror(code)
                self.shut = True
                self.pending = bytearray()
            elif code != 0:
                self.agent.ports.pop(self.id, None)
                self.close()
                self.agent.fail(self.id, "connect-refused", "127.0.0.1 refused the connection: %s" % os.strerror(code))
                return
            self.connecting = False
            self.agent.send({"type": "connected", "id": self.id, "window": PORT_WINDOW})
        self.flush()
        self.read()
        self.interest()

    def read(self):
        while self.lost is None and self.reading and self.credit > 0:
            try:
                data = self.sock.recv(min(CHUNK, self.credit))
            except (BlockingIOError, InterruptedError):
                return
            except OSError as error:
                self.finish(self.failure or "%s" % os.strerror(error.errno or 0))
                return
            if not data:
                if self.failure is not None:
                    self.finish(self.failure)
                    return
                self.reading = False
                self.agent.send({"type": "port_end", "id": self.id})
                self.maybe_done()
                return
            self.credit -= len(data)
            self.agent.send({"type": "port_data", "id": self.id}, data)

    def flush(self):
        while self.lost is None and self.pending and not self.connecting:
            try:
                written = self.sock.send(bytes(self.pending[:CHUNK]))
            except (BlockingIOError, InterruptedError):
                break
            except OSError as error:
                # The write side is dead (a reset): what the host sent is dropped, and the bytes already queued for
                # reading are still read and sent before the failure is reported (see read).
                self.failure = self.failure or os.strerror(error.errno or 0)
                self.shut = True
                self.pending = bytearray()
                self.maybe_done()
                return
            del self.pending[:written]
            self.granted_back += written
        if self.lost is None and self.granted_back > 0 and (not self.pending or self.granted_back >= PORT_WINDOW // 4):
            self.agent.send({"type": "port_credit", "id": self.id, "bytes": self.granted_back})
            self.granted_back = 0
        if self.lost is None and self.host_ended and not self.pending and not self.shut and not self.connecting:
            self.shut = True
            try:
                self.sock.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            self.maybe_done()

    def data(self, body):
        if self.failure is not None:
            return
        if len(self.pending) + len(body) > 2 * PORT_WINDOW:
            self.finish("the host sent past its credit")
            return
        self.pending += body
        self.flush()
        self.interest()

    def grant(self, count):
        if isinstance(count, int) and not isinstance(count, bool) and 0 < count <= 64 * 1024 * 1024:
            self.credit += count
            self.read()
            self.interest()

    def end_from_host(self):
        self.host_ended = True
        self.flush()
        self.interest()

    def maybe_done(self):
        if not self.reading and self.shut:
            self.finish(self.failure)

    def finish(self, error):
        if self.lost is not None:
            return
        self.agent.ports.pop(self.id, None)
        self.close()
        header = {"type": "port_closed", "id": self.id}
        if error:
            header["message"] = error
        self.agent.send(header)

    def close(self):
        if self.lost is None:
            self.lost = "closed"
        if self.registered:
            try:
                self.agent.selector.unregister(self.fd)
            except (KeyError, ValueError):
                pass
            self.registered = 0
        try:
            self.sock.close()
        except OSError:
            pass


class Agent(object):
    def __init__(self, zygote):
        self.zygote = zygote
        self.selector = selectors.DefaultSelector()
        self.contexts = {}
        self.lost = {}
        self.workers = set()
        self.runs = {}
        self.commands = {}
        self.watches = {}
        self.ports = {}
        self.counter = 0
        self.reader = FrameReader()

    def send(self, header, body=b""):
        write_all(1, encode_frame(header, body))

    def forget(self, worker):
        self.workers.discard(worker)
        if worker.context_id is not None and self.contexts.get(worker.context_id) is worker:
            del self.contexts[worker.context_id]
            self.lost[worker.context_id] = worker.lost
            while len(self.lost) > 1024:
                del self.lost[next(iter(self.lost))]

    def fail(self, request_id, code, message):
        self.send({"type": "error", "id": request_id, "code": code, "message": message})

    def handle(self, header, body=b""):
        kind = header.get("type")
        if kind in ("stdin", "stdin_close"):
            # Notifications (no id, no answer): input for a command started with stdin open.
            command = self.commands.get(header.get("target"))
            if command is not None:
                command.write_input(body, kind == "stdin_close")
            return
        if kind == "resize":
            # A notification: a terminal's new size (the kernel sends SIGWINCH to its foreground process group).
            command = self.commands.get(header.get("target"))
            if command is not None and command.terminal is not None:
                try:
                    set_window_size(command.terminal, header)
                except (OSError, ValueError, TypeError):
                    pass
            return
        if kind in ("port_data", "port_credit", "port_end", "port_close"):
            # Notifications for an exposed port's connection (adr/0053): bytes, credit, the host's end, an abort.
            connection = self.ports.get(header.get("target"))
            if connection is None:
                return
            if kind == "port_data":
                connection.data(body)
            elif kind == "port_credit":
                connection.grant(header.get("bytes"))
            elif kind == "port_end":
                connection.end_from_host()
            else:
                connection.finish(None)
            return
        request_id = header.get("id")
        if not isinstance(request_id, int):
            self.fail(None, "bad-request", "every request needs an integer id")
            return
        if kind == "ping":
            self.send({"type": "pong", "id": request_id})
        elif kind == "create_context":
            if header.get("language", "python") != "python":
                self.fail(request_id, "bad-request", "only python contexts exist")
                return
            self.counter += 1
            context_id = "ctx-%d-%s" % (self.counter, base64.b32encode(os.urandom(5)).decode("ascii").lower())
            worker = Worker(self, context_id, header.get("cwd"))
            self.workers.add(worker)
            self.contexts[context_id] = worker
            self.send({"type": "context_created", "id": request_id, "context": context_id, "pid": worker.pid})
        elif kind == "run":
            context_id = header.get("context")
            if request_id in self.runs:
                self.fail(request_id, "bad-request", "request id %d is already running" % request_id)
                return
            if context_id is None:
                worker = Worker(self, None, None)
                self.workers.add(worker)
            else:
                worker = self.contexts.get(context_id)
                if worker is None:
                    reason = self.lost.get(context_id)
                    if reason is not None:
                        self.fail(request_id, "context-lost", reason)
                    else:
                        self.fail(request_id, "unknown-context", "no context %s" % context_id)
                    return
            run = Run(self, header, one_shot=context_id is None)
            run.worker = worker
            self.runs[request_id] = run
            if worker.current is not None:
                worker.queue.append(run)
            else:
                worker.start(run)
        elif kind == "cancel":
            target = self.runs.get(header.get("target"))
            if target is not None:
                if not target.started:
                    target.worker.queue.remove(target)
                target.stop("cancelled")
            self.send({"type": "ack", "id": request_id})
        elif kind == "close_context":
            worker = self.contexts.get(header.get("context"))
            if worker is not None:
                worker.kill("the context was closed")
            self.send({"type": "closed", "id": request_id})
        elif kind == "spawn":
            try:
                command = Command(self, header)
            except Exception as error:
                self.fail(request_id, "spawn-failed", "%s: %s" % (type(error).__name__, error))
                return
            self.commands[request_id] = command
            self.send({"type": "spawned", "id": request_id, "pid": command.process.pid})
        elif kind == "kill_command":
            command = self.commands.get(header.get("target"))
            if command is not None:
                command.kill()
            self.send({"type": "ack", "id": request_id})
        elif kind == "watch":
            try:
                watch = Watch(self, header)
            except WatchRefused as error:
                self.fail(request_id, error.code, str(error))
                return
            except Exception as error:
                self.fail(request_id, "watch-failed", "%s: %s" % (type(error).__name__, error))
                return
            self.watches[request_id] = watch
            self.send({"type": "watching", "id": request_id})
            watch.flush()
        elif kind == "unwatch":
            watch = self.watches.pop(header.get("target"), None)
            if watch is not None:
                watch.close()
            self.send({"type": "ack", "id": request_id})
        elif kind == "connect":
            if request_id in self.ports:
                self.fail(request_id, "bad-request", "request id %d is already connected" % request_id)
                return
            try:
                connection = PortConnection(self, header)
            except ValueError as error:
                self.fail(request_id, "bad-request", str(error))
                return
            except OSError as error:
                self.fail(request_id, "connect-refused", "127.0.0.1 refused the connection: %s" % (error.strerror or error))
                return
            self.ports[request_id] = connection
        elif kind == "shutdown":
            self.shutdown()
        else:
            self.fail(request_id, "unknown-type", "unknown message type %r" % (kind,))

    def tick(self):
        now = time.monotonic()
        nearest = None
        for run in list(self.runs.values()):
            if run.finished:
                continue
            if run.stop_reason is None and run.deadline_at is not None:
                if now >= run.deadline_at:
                    run.stop("timeout")
                else:
                    nearest = run.deadline_at if nearest is None else min(nearest, run.deadline_at)
            if run.kill_at is not None:
                if now >= run.kill_at:
                    run.kill_at = None
                    run.worker.kill("killed after it did not stop within %d ms of an interrupt" % run.grace)
                else:
                    nearest = run.kill_at if nearest is None else min(nearest, run.kill_at)
        if self.commands:
            # Belt and braces for the SIGCHLD wake-up: look at running commands at least once a second.
            for command in list(self.commands.values()):
                command.poll()
            nearest = now + 1.0 if nearest is None else min(nearest, now + 1.0)
        return None if nearest is None else max(0.0, nearest - now)

    def shutdown(self):
        for command in list(self.commands.values()):
            command.kill()
        for worker in list(self.workers):
            try:
                os.killpg(worker.pid, signal.SIGKILL)
            except OSError:
                pass
        os._exit(0)

    def serve(self):
        os.set_blocking(0, False)
        self.selector.register(0, selectors.EVENT_READ, (None, "host"))
        self.selector.register(self.zygote.fileno(), selectors.EVENT_READ, (None, "zygote"))
        # A command's exit wakes the loop: SIGCHLD writes to a pipe the selector watches.
        wake_read, wake_write = os.pipe()
        os.set_blocking(wake_read, False)
        os.set_blocking(wake_write, False)
        signal.set_wakeup_fd(wake_write)
        signal.signal(signal.SIGCHLD, lambda _number, _frame: None)
        self.selector.register(wake_read, selectors.EVENT_READ, (None, "child"))
        self.send({"type": "hello", "id": 0, "protocol": PROTOCOL, "agent": AGENT_VERSION,
                   "python": "%d.%d.%d" % sys.version_info[:3], "pid": os.getpid(), "undumpable": UNDUMPABLE,
                   # Whether commands can carry their own audit tag (this process's loginuid is unset): adr/0025.
                   "command_tags": own_loginuid() == AUDIT_UNSET,
                   "interpreter_tag": INTERPRETER_TAG or None})
        while True:
            timeout = self.tick()
            for key, _events in self.selector.select(timeout):
                owner, kind = key.data
                if kind == "host":
                    try:
                        data = os.read(0, CHUNK)
                    except BlockingIOError:
                        continue
                    if not data:
                        self.shutdown()
                    try:
                        frames = self.reader.feed(data)
                    except Exception as error:
                        self.fail(None, "bad-frame", str(error))
                        self.shutdown()
                    for header, body in frames:
                        try:
                            self.handle(header, body)
                        except Exception as error:
                            self.fail(header.get("id") if isinstance(header.get("id"), int) else None, "internal", "%s: %s" % (type(error).__name__, error))
                elif kind == "child":
                    try:
                        while os.read(key.fd, 512):
                            pass
                    except OSError:
                        pass
                    for command in list(self.commands.values()):
                        command.poll()
                elif kind == "zygote":
                    # Nothing is ever sent unasked: readable means it exited. Without it no interpreter can start.
                    self.shutdown()
                elif owner is not None and owner.lost is None:
                    owner.on_readable(key.fd, kind)


def main():
    if ZYGOTE_PID == 0:
        AGENT_END.close()
        zygote_main(ZYGOTE_END)
        os._exit(0)
    ZYGOTE_END.close()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.stdout = sys.stderr
    Agent(AGENT_END).serve()


main()
