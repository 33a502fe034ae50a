import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import {
  describeGroup,
  expectSbxError,
  type ContractHarness,
  type SandboxContractOptions,
  type SandboxProviderFactoryForContract,
} from "../harness.js";

const SECRET_NAME = "SBX_CONTRACT_SECRET";

/**
 * A secret whose encodings all differ from each other and from the raw value: a space (URL `%20` or `+`), a quote and
 * a backslash (JSON-escaped), `/` and `+` (standard vs URL-safe base64), `?=&` (URL-encoded) and a non-ASCII letter.
 * Short enough that the `base64` tool prints it on one line.
 */
function hostileSecret(): string {
  return `sbx "q" \\b/s+p?q=1&é ${randomUUID().slice(0, 8)}`;
}

/** Every form the sandbox prints below, computed on the host independently. */
function encodedForms(secret: string): Record<string, string> {
  const bytes = Buffer.from(secret, "utf8");
  const hex = bytes.toString("hex");
  return {
    raw: secret,
    base64: bytes.toString("base64"),
    base64url: bytes.toString("base64url"),
    urlEncoded: encodeURIComponent(secret),
    formEncoded: encodeURIComponent(secret).replace(/%20/g, "+"),
    hex,
    hexUpper: hex.toUpperCase(),
    json: JSON.stringify(secret).slice(1, -1),
    jsonAscii: JSON.stringify(secret)
      .slice(1, -1)
      .replace(/[\u007f-\uffff]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`),
  };
}

/** Python printing every encoded form of the secret to stdout and stderr, then hanging until killed. */
const PRINT_FORMS_AND_HANG = [
  "import os, sys, base64, binascii, json, time, urllib.parse",
  `s = os.environ["${SECRET_NAME}"]`,
  "b = s.encode()",
  "forms = [s, base64.b64encode(b).decode(), base64.urlsafe_b64encode(b).decode(), urllib.parse.quote(s, safe=''), urllib.parse.quote_plus(s, safe=''), binascii.hexlify(b).decode(), binascii.hexlify(b).decode().upper(), json.dumps(s), json.dumps(s, ensure_ascii=False)]",
  "for form in forms:",
  "    print('form:', form, flush=True)",
  "    print('form:', form, file=sys.stderr, flush=True)",
  "time.sleep(120)",
].join("\n");

function everyTextOf(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current instanceof Error; depth++) {
    parts.push(current.message, String(current.stack ?? ""));
    for (const [key, value] of Object.entries(current))
      if (key !== "cause") parts.push(typeof value === "string" ? value : (JSON.stringify(value) ?? ""));
    current = (current as { cause?: unknown }).cause;
  }
  parts.push(JSON.stringify(error) ?? "");
  return parts.join("\n");
}

function expectNoForm(text: string, secret: string): void {
  for (const [name, form] of Object.entries(encodedForms(secret))) {
    expect(text.includes(form), `the ${name} form of the secret leaked`).toBe(false);
  }
}

/** Registers the secret-encoding tests: a secret is redacted in every encoding, everywhere it can reach the host. */
export function registerSecretEncodingsTests(harness: ContractHarness): void {
  const { contractTest } = harness;

  contractTest(
    "secret-encodings.partial-output",
    "a secret printed raw, base64, URL-encoded, hex and JSON-escaped is redacted in a timed-out run's partial output",
    async () => {
      const secret = hostileSecret();
      await using sandbox = await harness.createSandbox({ secrets: { [SECRET_NAME]: secret } });
      const error = (await expectSbxError(() => sandbox.runCode(PRINT_FORMS_AND_HANG, { timeoutMs: 4_000 }), "SBX_TIMEOUT")) as unknown as {
        partialStdout: string;
        partialStderr: string;
      };
      // The attack really happened: nine forms were printed to each stream, and each was redacted.
      expect(error.partialStdout.split("\n").filter((line) => line.startsWith("form: ")).length).toBe(9);
      expect(error.partialStdout.match(/\[redacted\]/g)?.length ?? 0).toBeGreaterThanOrEqual(9);
      expect(error.partialStderr.match(/\[redacted\]/g)?.length ?? 0).toBeGreaterThanOrEqual(9);
      expectNoForm(everyTextOf(error), secret);
    },
  );

  contractTest(
    "secret-encodings.command-partial-output",
    "a command printing the secret raw and through base64 is redacted in the TimeoutError",
    async () => {
      const secret = hostileSecret();
      await using sandbox = await harness.createSandbox({ secrets: { [SECRET_NAME]: secret } });
      const error = await expectSbxError(
        () =>
          sandbox.commands.run(
            `printf '%s\\n' "$${SECRET_NAME}"; printf '%s' "$${SECRET_NAME}" | base64; printf '%s' "$${SECRET_NAME}" | base64 1>&2; sleep 60`,
            { timeoutMs: 3_000 },
          ),
        "SBX_TIMEOUT",
      );
      expect((error as unknown as { partialStdout: string }).partialStdout).toMatch(/^\[redacted\]\n\[redacted\]/);
      expectNoForm(everyTextOf(error), secret);
    },
  );

  contractTest("secret-encodings.error-fields", "a path holding the secret is absent from error messages and fields (path, JSON)", async () => {
    const secret = hostileSecret();
    await using sandbox = await harness.createSandbox({ secrets: { [SECRET_NAME]: secret } });
    const missing = await expectSbxError(() => sandbox.files.read(`missing-${secret}`), "SBX_FILE_NOT_FOUND");
    expectNoForm(everyTextOf(missing), secret);
    const escaping = await expectSbxError(() => sandbox.files.read(`../../${secret}`), "SBX_PATH");
    expectNoForm(everyTextOf(escaping), secret);
  });

  contractTest("secret-encodings.audit", "the audit record holds no form of the secret and stays valid JSON data", async () => {
    const secret = hostileSecret();
    await using sandbox = await harness.createSandbox({ secrets: { [SECRET_NAME]: secret } });
    const audit = sandbox.audit();
    expectNoForm(JSON.stringify(audit), secret);
    expect(audit.environment.secrets).toEqual([SECRET_NAME]);
    await sandbox.kill();
    expectNoForm(JSON.stringify(sandbox.audit()), secret);
  });

  contractTest(
    "secret-encodings.short-values-refused",
    'secrets too short to redact safely ("true", "1", "deny") are refused at create with InvalidArgumentError',
    async () => {
      for (const value of ["true", "1", "none", "deny"]) {
        const error = (await expectSbxError(
          () => harness.createSandbox({ secrets: { SBX_SHORT_SECRET: value } }),
          "SBX_INVALID_ARGUMENT",
        )) as unknown as { field: string; message: string };
        expect(error.field).toBe("options.secrets.SBX_SHORT_SECRET");
      }
    },
  );
}

/** The secret-encodings group on its own. */
export function describeSecretEncodingsContract(name: string, factory: SandboxProviderFactoryForContract, options?: SandboxContractOptions): void {
  describeGroup("secret encodings", name, factory, options, registerSecretEncodingsTests);
}
