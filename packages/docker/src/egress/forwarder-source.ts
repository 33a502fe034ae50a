/**
 * The in-sandbox egress forwarder (Python ≥ 3.8, standard library only), started by the driver as one exec:
 * `python3 -I -u -c <source> <port> [<socket path> <probe token>]`. It listens on 127.0.0.1:<port> inside the sandbox
 * and carries every accepted connection to the sbx host process, which runs the proxy that applies the allowlist. It
 * decides nothing: whatever it forwards is checked on the host. Two transports (adr/0027):
 * - **unix**: when a socket path is given and a probe (the token and a newline, answered `ok`) succeeds over it, each
 *   accepted connection is joined to a new connection on that Unix socket (the host proxy's, bind-mounted read-only)
 *   and bytes are copied both ways by two threads (`recv_into`/`sendall` with a 1 MiB buffer each; `os.splice`
 *   through a pipe measured no faster here). The exec stream then only carries the ready frame and, by its end, the
 *   host's exit.
 * - **exec** (the fallback, and the only one without a socket path): every connection is carried over the exec's
 *   stdin/stdout in frames, both directions: `u32 big-endian length of the rest | u32 stream id | u8 type |
 *   payload`; types: 1 open (forwarder → host), 2 data, 3 end (the sender will write no more on the stream),
 *   4 reset (close the stream now).
 * Either way the forwarder first sends one frame of type 0 (ready) once the listener is bound, whose payload names
 * the transport: `unix`, or `exec` followed by why the socket was not used.
 */
export const FORWARDER_SOURCE = String.raw`
import os, socket, struct, sys, threading
port = int(sys.argv[1])
path = sys.argv[2] if len(sys.argv) > 3 else ""
token = sys.argv[3] if len(sys.argv) > 3 else ""
out = os.fdopen(1, "wb", buffering=0)
inp = os.fdopen(0, "rb", buffering=0)
lock = threading.Lock()
streams = {}
BLOCK = 1 << 20
def send(stream, kind, payload=b""):
    header = struct.pack(">IIB", 5 + len(payload), stream, kind)
    with lock:
        out.write(header + payload)
def probe():
    if not path:
        return "exec: no socket offered"
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(10)
        s.connect(path)
        s.sendall(token.encode() + b"\n")
        answer = b""
        while len(answer) < 3:
            chunk = s.recv(3 - len(answer))
            if not chunk:
                break
            answer += chunk
        s.close()
        return "unix" if answer == b"ok\n" else "exec: the socket did not answer the probe"
    except OSError as error:
        return "exec: the sandbox cannot connect to the socket (" + (error.strerror or type(error).__name__) + ")"
def copy(source, target):
    buffer = bytearray(BLOCK)
    view = memoryview(buffer)
    while True:
        count = source.recv_into(buffer)
        if count == 0:
            return
        target.sendall(view[:count])
def relay(source, target, pending):
    try:
        copy(source, target)
        target.shutdown(socket.SHUT_WR)
    except OSError:
        for end in (source, target):
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
    with lock:
        pending[0] -= 1
        last = pending[0] == 0
    if last:
        source.close()
        target.close()
def join(conn):
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError:
        upstream.close()
        conn.close()
        return
    pending = [2]
    threading.Thread(target=relay, args=(upstream, conn, pending), daemon=True).start()
    relay(conn, upstream, pending)
def pump(stream, conn):
    try:
        while True:
            data = conn.recv(262144)
            if not data:
                break
            send(stream, 2, data)
        send(stream, 3)
    except OSError:
        send(stream, 4)
def accept(listener, transport):
    stream = 0
    while True:
        conn, _ = listener.accept()
        if transport == "unix":
            threading.Thread(target=join, args=(conn,), daemon=True).start()
            continue
        stream += 1
        streams[stream] = conn
        send(stream, 1)
        threading.Thread(target=pump, args=(stream, conn), daemon=True).start()
def read_exactly(count):
    chunks = []
    while count > 0:
        chunk = inp.read(count)
        if not chunk:
            return None
        chunks.append(chunk)
        count -= len(chunk)
    return b"".join(chunks)
transport = probe()
listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", port))
listener.listen(128)
threading.Thread(target=accept, args=(listener, transport), daemon=True).start()
send(0, 0, transport.encode())
while True:
    head = read_exactly(4)
    if head is None:
        os._exit(0)
    (length,) = struct.unpack(">I", head)
    if length < 5 or length > 1048576:
        os._exit(2)
    body = read_exactly(length)
    if body is None:
        os._exit(0)
    stream, kind = struct.unpack(">IB", body[:5])
    conn = streams.get(stream)
    if conn is None:
        continue
    try:
        if kind == 2:
            conn.sendall(body[5:])
        elif kind == 3:
            conn.shutdown(socket.SHUT_WR)
        elif kind == 4:
            streams.pop(stream, None)
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            conn.close()
    except OSError:
        streams.pop(stream, None)
        try:
            conn.close()
        except OSError:
            pass
        send(stream, 4)
`;
