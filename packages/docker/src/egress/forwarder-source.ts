/**
 * The in-sandbox egress forwarder (Python ≥ 3.8, standard library only), started by the driver as one root exec:
 * `python3 -I -u -c <source> <port>`. It listens on 127.0.0.1:<port> inside the sandbox and carries every accepted
 * connection over its stdin/stdout to the sbx host process, which runs the proxy that applies the allowlist. It
 * decides nothing: whatever it forwards is checked on the host. Frames, both directions:
 * `u32 big-endian length of the rest | u32 stream id | u8 type | payload`; types: 0 ready (forwarder → host, once,
 * after the listener is bound), 1 open (forwarder → host), 2 data, 3 end (the sender will write no more on the
 * stream), 4 reset (close the stream now).
 */
export const FORWARDER_SOURCE = String.raw`
import os, socket, struct, sys, threading
port = int(sys.argv[1])
out = os.fdopen(1, "wb", buffering=0)
inp = os.fdopen(0, "rb", buffering=0)
lock = threading.Lock()
streams = {}
def send(stream, kind, payload=b""):
    header = struct.pack(">IIB", 5 + len(payload), stream, kind)
    with lock:
        out.write(header + payload)
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
def accept(listener):
    stream = 0
    while True:
        conn, _ = listener.accept()
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
listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", port))
listener.listen(128)
threading.Thread(target=accept, args=(listener,), daemon=True).start()
send(0, 0)
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
