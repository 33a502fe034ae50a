import { codeInterpreterDisplaySource } from "./code-interpreter-display.js";

/**
 * Source of the Python driver copied into every sandbox. One driver process
 * backs one code context: it reads JSON requests (one per line) on stdin and
 * writes the code interpreter's NDJSON messages on a private copy of fd 1.
 * fd 1 itself is pointed at fd 2 so output of subprocesses cannot corrupt the
 * protocol.
 */
export const codeInterpreterDriverSource =
  String.raw`
import ast, codecs, io, json, os, select, sys, threading, time, traceback, datetime

_protocol = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
_lock = threading.Lock()
_driver_file = os.path.abspath(__file__)


def _emit(message):
    with _lock:
        _protocol.write(json.dumps(message) + "\n")
        _protocol.flush()


def _now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat()
` +
  codeInterpreterDisplaySource +
  String.raw`


class _Stream(io.TextIOBase):
    # Line-buffered like Jupyter's stream messages: whole lines are sent as they complete. An unfinished line is sent
    # once it has waited ipykernel's flush interval (0.2 s, checked at the next write), as ipykernel sends whatever its
    # buffer holds every 0.2 s: a long flood without newlines becomes several messages, not one of many megabytes. It is
    # kept as a list of pieces and only the new text is searched for a newline, so a flood costs linear time.
    _FLUSH_INTERVAL = 0.2

    def __init__(self, kind):
        self._kind = kind
        self._pending = []
        self._pending_since = None

    def writable(self):
        return True

    def write(self, text):
        if not isinstance(text, str):
            text = str(text)
        newline = text.rfind("\n")
        if newline >= 0:
            self._pending.append(text[: newline + 1])
            complete = "".join(self._pending)
            rest = text[newline + 1 :]
            self._pending = [rest] if rest else []
            self._pending_since = time.monotonic() if rest else None
            _emit({"type": self._kind, "text": complete, "timestamp": _now()})
        elif text:
            self._pending.append(text)
            if self._pending_since is None:
                self._pending_since = time.monotonic()
            elif time.monotonic() - self._pending_since >= self._FLUSH_INTERVAL:
                self.flush()
        return len(text)

    def flush(self):
        self._pending_since = None
        if self._pending:
            pending = "".join(self._pending)
            self._pending = []
            _emit({"type": self._kind, "text": pending, "timestamp": _now()})

    def isatty(self):
        return False

    @property
    def encoding(self):
        return "utf-8"


class _FileDescriptorCapture:
    # Like ipykernel 6: output written straight to fd 1/2 (subprocesses, C code) is
    # captured through a pipe and forwarded as stdout/stderr messages.
    def __init__(self, kind, target):
        self._kind = kind
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._read_end, write_end = os.pipe()
        os.dup2(write_end, target)
        os.close(write_end)
        os.set_blocking(self._read_end, False)
        threading.Thread(target=self._loop, daemon=True).start()

    def _forward_available(self):
        chunks = []
        while True:
            try:
                data = os.read(self._read_end, 65536)
            except BlockingIOError:
                break
            if not data:
                break
            chunks.append(data)
        text = self._decoder.decode(b"".join(chunks))
        if text:
            _emit({"type": self._kind, "text": text, "timestamp": _now()})

    def _loop(self):
        while True:
            select.select([self._read_end], [], [], 0.5)
            with _capture_lock:
                self._forward_available()

    def drain(self):
        with _capture_lock:
            self._forward_available()


_capture_lock = threading.Lock()
_captures = [_FileDescriptorCapture("stdout", 1), _FileDescriptorCapture("stderr", 2)]

sys.stdout = _Stream("stdout")
sys.stderr = _Stream("stderr")

_executing = False


def _on_interrupt(signal_number, frame):
    # Interrupts only hit user code; outside a cell (driver bookkeeping) they are ignored.
    if _executing:
        raise KeyboardInterrupt()


import signal as _signal_module
_signal_module.signal(_signal_module.SIGINT, _on_interrupt)
_namespace = {"__name__": "__main__", "__builtins__": __builtins__}
_count = 0
_input = sys.__stdin__

_emit({"type": "ready", "pid": os.getpid()})

for _line in _input:
    _line = _line.strip()
    if not _line:
        continue
    _request = json.loads(_line)
    _count += 1
    _env = _request.get("env_vars") or {}
    _saved = {key: os.environ.get(key) for key in _env}
    os.environ.update({key: str(value) for key, value in _env.items()})
    _begin_cell()
    _code = _request.get("code", "")
    try:
        _executing = True
        _tree = ast.parse(_code, "<cell>", "exec")
        _last = None
        if _tree.body and isinstance(_tree.body[-1], ast.Expr):
            _last = ast.Expression(_tree.body.pop().value)
        exec(compile(_tree, "<cell>", "exec"), _namespace)
        if _last is not None:
            _value = eval(compile(_last, "<cell>", "eval"), _namespace)
            # The displayhook: the main result with every MIME type the display formatter gives.
            _display_last_value(_value, _code, _namespace)
    except BaseException as _error:
        _executing = False
        _tb = _error.__traceback__
        while _tb is not None and os.path.abspath(_tb.tb_frame.f_code.co_filename) == _driver_file:
            _tb = _tb.tb_next
        _report_error(_error, _tb)
    finally:
        _executing = False
        try:
            # post_execute: the inline backend shows the figures still open, also after an error.
            _flush_figures()
        except BaseException as _error:
            _report_error(_error, _error.__traceback__)
        sys.stdout.flush()
        sys.stderr.flush()
        for _capture in _captures:
            _capture.drain()
        for _key, _old in _saved.items():
            if _old is None:
                os.environ.pop(_key, None)
            else:
                os.environ[_key] = _old
        _emit({"type": "number_of_executions", "execution_count": _count})
        _emit({"type": "end_of_execution"})
`;
