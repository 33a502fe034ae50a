import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** pip as a wheel on the host (Debian `python3-pip-whl`, provisioned by .ci/provision.sh), or null. */
export function hostPipWheel(): string | null {
  const directory = "/usr/share/python-wheels";
  if (!existsSync(directory)) return null;
  const wheel = readdirSync(directory).find((name) => /^pip-[\d.]+-py3-none-any\.whl$/.test(name));
  return wheel ? join(directory, wheel) : null;
}

/** A tiny pure-Python wheel `sbxdemo-0.1.0` (module `sbxdemo` with `VALUE = "sbx-demo-ok"`), built with zipfile. */
export function buildDemoWheel(): { name: string; bytes: Buffer; sha256: string } {
  const directory = mkdtempSync(join(tmpdir(), "sbx-wheel-"));
  const name = "sbxdemo-0.1.0-py3-none-any.whl";
  const script = `
import base64, hashlib, sys, zipfile
files = {
    "sbxdemo/__init__.py": b'VALUE = "sbx-demo-ok"\\n',
    "sbxdemo-0.1.0.dist-info/METADATA": b"Metadata-Version: 2.1\\nName: sbxdemo\\nVersion: 0.1.0\\n",
    "sbxdemo-0.1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\\nGenerator: sbx-test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
}
record = []
for path, data in files.items():
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    record.append(f"{path},sha256={digest},{len(data)}")
record.append("sbxdemo-0.1.0.dist-info/RECORD,,")
files["sbxdemo-0.1.0.dist-info/RECORD"] = ("\\n".join(record) + "\\n").encode()
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as wheel:
    for path, data in files.items():
        wheel.writestr(path, data)
`;
  try {
    execFileSync("python3", ["-c", script, join(directory, name)]);
    const bytes = readFileSync(join(directory, name));
    return { name, bytes, sha256: createHash("sha256").update(bytes).digest("hex") };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

/** A PEP 503 simple index on the host's loopback serving one wheel; `requests` lists the paths asked for. */
export async function startSimpleIndex(wheel: {
  name: string;
  bytes: Buffer;
  sha256: string;
}): Promise<{ port: number; requests: string[]; close(): Promise<void> }> {
  const requests: string[] = [];
  const server = http.createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0]!;
    requests.push(path);
    if (path === "/simple/sbxdemo/") {
      response.setHeader("Content-Type", "text/html");
      response.end(`<!DOCTYPE html><html><body><a href="/packages/${wheel.name}#sha256=${wheel.sha256}">${wheel.name}</a></body></html>`);
    } else if (path === `/packages/${wheel.name}`) {
      response.setHeader("Content-Type", "application/octet-stream");
      response.end(wheel.bytes);
    } else {
      response.statusCode = 404;
      response.end("not found");
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
