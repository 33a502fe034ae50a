import { redactValue as redactCoreValue } from "@sbx/core/adapter";

/** The kinds of call the fake records. */
export type FakeCallKind = "create" | "command" | "runCode" | "createCodeContext" | "file" | "kill";

/** One recorded call. Secret values are replaced by `[redacted]`. */
export interface FakeCall {
  /** What kind of call. */
  readonly kind: FakeCallKind;
  /** The sandbox it was made on; for a failed `create`, null. */
  readonly sandboxId: string | null;
  /** The operation, for example `"spawn"`, `"writeFile"`, `"create"`. */
  readonly operation: string;
  /** The arguments, JSON-safe, secrets redacted. */
  readonly arguments: Readonly<Record<string, unknown>>;
  /** ISO time of the call. */
  readonly at: string;
}

/**
 * Replaces every secret value in a JSON-safe value with `[redacted]`, recursively, in every form core recognises
 * (raw, base64, URL-encoded, hex, JSON-escaped): the same redaction as core's errors and audit record. Bytes are
 * recorded by length only.
 */
export function redactValue(value: unknown, secrets: readonly string[]): unknown {
  return redactCoreValue(describeBytes(value), secrets);
}

function describeBytes(value: unknown): unknown {
  if (value instanceof Uint8Array) return `<${value.byteLength} bytes>`;
  if (Array.isArray(value)) return value.map(describeBytes);
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = describeBytes(item);
    return out;
  }
  return value;
}

/** Append-only record of calls, shared by a provider and its sandboxes. */
export class CallRecord {
  private readonly entries: FakeCall[] = [];

  /** Records a call, redacting secret values from its arguments. */
  add(kind: FakeCallKind, sandboxId: string | null, operation: string, parameters: Record<string, unknown>, secrets: readonly string[]): void {
    this.entries.push(
      Object.freeze({
        kind,
        sandboxId,
        operation,
        arguments: Object.freeze(redactValue(parameters, secrets) as Record<string, unknown>),
        at: new Date().toISOString(),
      }),
    );
  }

  /** A snapshot of every call so far, oldest first. */
  list(): readonly FakeCall[] {
    return [...this.entries];
  }

  /** Forgets every recorded call. */
  clear(): void {
    this.entries.length = 0;
  }
}
