/**
 * Source of the worker thread that hosts Pyodide. It runs in a `worker_threads` Worker (eval mode) so a run that
 * loops forever can be interrupted (through a shared interrupt buffer) or, failing that, the whole worker terminated,
 * while the main thread stays responsive. Plain JavaScript (CommonJS) on purpose: it is evaluated as a string.
 */
export const PYTHON_WORKER_SOURCE = String.raw`
const { parentPort, workerData } = require("node:worker_threads");
const { loadPyodide } = require(workerData.pyodidePath);

const HELPERS = ${"`"}
import sys, os, time, traceback, ipaddress

_sbx_contexts = {}
_sbx_policy = {"egress": "deny", "names": set(), "suffixes": [], "networks": []}

def _sbx_set_policy(egress, allow):
    names, suffixes, networks = set(), [], []
    for entry in allow:
        entry = entry.strip().lower().strip("[]")
        if entry.startswith("*."):
            suffixes.append(entry[1:])
            continue
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            names.add(entry.rstrip("."))
    _sbx_policy.update(egress=egress, names=names, suffixes=suffixes, networks=networks)

def _sbx_host_allowed(host):
    if _sbx_policy["egress"] == "allow":
        return True
    host = str(host).strip().lower().strip("[]").rstrip(".")
    try:
        address = ipaddress.ip_address(host)
        return any(address in network for network in _sbx_policy["networks"])
    except ValueError:
        pass
    if host in _sbx_policy["names"]:
        return True
    return any(host.endswith(suffix) and len(host) > len(suffix) for suffix in _sbx_policy["suffixes"])

def _sbx_audit(event, args):
    host = None
    if event in ("socket.connect", "socket.sendto") and len(args) >= 2 and isinstance(args[1], tuple):
        host = args[1][0]
    elif event == "socket.getaddrinfo":
        host = args[0]
    if host is not None and not _sbx_host_allowed(host if not isinstance(host, bytes) else host.decode()):
        raise PermissionError(f"network access to {host} denied by the sandbox egress policy")

sys.addaudithook(_sbx_audit)

_sbx_real_sleep = time.sleep
def _sbx_sleep(seconds):
    # Short slices so an interrupt (timeout, kill) is noticed promptly.
    end = time.monotonic() + seconds
    while True:
        left = end - time.monotonic()
        if left <= 0:
            return
        _sbx_real_sleep(min(left, 0.05))
time.sleep = _sbx_sleep

def _sbx_new_namespace():
    return {"__name__": "__main__", "__builtins__": __builtins__}

def _sbx_run(code, namespace, cwd, env):
    os.environ.clear()
    os.environ.update(env)
    try:
        os.chdir(cwd)
    except OSError:
        pass
    try:
        exec(compile(code, "<code>", "exec"), namespace)
        return None
    except BaseException as exception:
        if isinstance(exception, SystemExit) and (exception.code is None or exception.code == 0):
            return None
        lines = traceback.format_exception(type(exception), exception, exception.__traceback__.tb_next if exception.__traceback__ else None)
        text = "".join(lines)
        sys.stderr.write(text)
        sys.stderr.flush()
        return (type(exception).__name__, str(exception), text)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
${"`"};

let pyodide;
let current = 0;

function describe(error) {
  if (error && error.message) return String(error.message);
  try { return JSON.stringify(error); } catch { return String(error); }
}

function removeTree(FS, path, keepRoot) {
  const info = FS.analyzePath(path);
  if (!info.exists) return;
  const stat = FS.lstat(path);
  if (FS.isDir(stat.mode)) {
    FS.chmod(path, 0o755);
    for (const name of FS.readdir(path)) if (name !== "." && name !== "..") removeTree(FS, path + "/" + name, false);
    if (!keepRoot) FS.rmdir(path);
  } else FS.unlink(path);
}

function collectTree(FS, path, entries) {
  const info = FS.analyzePath(path);
  if (!info.exists) return;
  const stat = FS.lstat(path);
  if (FS.isDir(stat.mode)) {
    entries.push({ path, kind: "dir" });
    for (const name of FS.readdir(path)) if (name !== "." && name !== "..") collectTree(FS, path + "/" + name, entries);
  } else if (FS.isFile(stat.mode)) entries.push({ path, kind: "file", data: FS.readFile(path) });
}

function loadRoots(FS, roots) {
  for (const root of roots) {
    removeTree(FS, root.path, true);
    FS.mkdirTree(root.path);
    for (const entry of root.entries) {
      if (entry.kind === "dir") FS.mkdirTree(entry.path);
      else {
        const parent = entry.path.slice(0, entry.path.lastIndexOf("/")) || "/";
        FS.mkdirTree(parent);
        FS.writeFile(entry.path, entry.data);
      }
    }
    if (root.readOnly) {
      const entries = [];
      collectTree(FS, root.path, entries);
      for (const entry of entries) FS.chmod(entry.path, entry.kind === "dir" ? 0o555 : 0o444);
    }
  }
}

function handleRun(message) {
  const py = pyodide;
  current = message.id;
  let result;
  let namespace;
  try {
    loadRoots(py.FS, message.roots);
    py.globals.get("_sbx_set_policy")(message.policy.egress, py.toPy(message.policy.allow));
    const contexts = py.globals.get("_sbx_contexts");
    if (message.contextId !== null) {
      if (!contexts.has(message.contextId)) {
        parentPort.postMessage({ type: "done", id: message.id, missingContext: true, error: null, roots: [] });
        return;
      }
      namespace = contexts.get(message.contextId);
    } else namespace = py.globals.get("_sbx_new_namespace")();
    const outcome = py.globals.get("_sbx_run")(message.code, namespace, message.cwd, py.toPy(message.env));
    if (outcome !== undefined && outcome !== null) {
      const values = outcome.toJs();
      result = { name: values[0], value: values[1], traceback: values[2] };
      outcome.destroy();
    } else result = null;
  } catch (error) {
    result = { name: "InternalError", value: describe(error), traceback: String(error && error.stack || describe(error)) };
  } finally {
    if (message.contextId === null && namespace && namespace.destroy) namespace.destroy();
  }
  const roots = [];
  for (const root of message.roots) {
    if (root.readOnly) continue;
    const entries = [];
    collectTree(py.FS, root.path, entries);
    roots.push({ path: root.path, entries });
  }
  parentPort.postMessage({ type: "done", id: message.id, error: result, roots });
}

parentPort.on("message", (message) => {
  try {
    if (message.type === "run") handleRun(message);
    else if (message.type === "createContext") {
      const contexts = pyodide.globals.get("_sbx_contexts");
      contexts.set(message.contextId, pyodide.globals.get("_sbx_new_namespace")());
      parentPort.postMessage({ type: "contextCreated", id: message.id });
    } else if (message.type === "dropContexts") {
      const contexts = pyodide.globals.get("_sbx_contexts");
      for (const contextId of message.contextIds) if (contexts.has(contextId)) contexts.delete(contextId);
    }
  } catch (error) {
    parentPort.postMessage({ type: "done", id: message.id, error: { name: "InternalError", value: String(error && error.message || error), traceback: "" }, roots: [] });
  }
});

(async () => {
  try {
    // jsglobals: {} keeps Python's "js" module from reaching this thread's globals (fetch, process, require).
    pyodide = await loadPyodide({ jsglobals: {}, env: { HOME: "/workspace" } });
    pyodide.setInterruptBuffer(workerData.interruptBuffer);
    const forward = (type) => ({ write(buffer) { parentPort.postMessage({ type, id: current, data: buffer.slice() }); return buffer.length; } });
    pyodide.setStdout(forward("stdout"));
    pyodide.setStderr(forward("stderr"));
    pyodide.runPython(HELPERS);
    parentPort.postMessage({ type: "ready", version: pyodide.version });
  } catch (error) {
    parentPort.postMessage({ type: "failed", message: String(error && error.stack || error) });
  }
})();
`;
