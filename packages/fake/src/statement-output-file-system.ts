import type { IFileSystem } from "just-bash";
import { OutputEncoder } from "./output-encoder.js";

/** Folder, never created, whose "files" are the output streams of running scripts. Writes there never reach the filesystem. */
export const OUTPUT_STREAM_ROOT = "/.sbx-output-streams";

/** Where one script's standard output and error go while it runs. */
export interface OutputStreamSink {
  readonly onStdout: (bytes: Uint8Array) => void;
  readonly onStderr: (bytes: Uint8Array) => void;
}

interface OpenSink extends OutputStreamSink {
  readonly stdoutEncoder: OutputEncoder;
  readonly stderrEncoder: OutputEncoder;
}

/**
 * just-bash 3.4 hands a redirection's content over as a string with no reliable mark of text or bytes (a statement's
 * output mixes both, written with encoding "utf8"), so a string is turned back into bytes by the per-stream
 * `OutputEncoder` (see its limits). A Uint8Array is taken as is.
 */
function contentBytes(content: unknown, encoder: OutputEncoder): Uint8Array {
  if (content instanceof Uint8Array) return content.slice();
  return encoder.encode(String(content ?? ""));
}

/**
 * Wraps a just-bash filesystem so that appending to `${OUTPUT_STREAM_ROOT}/<token>/stdout` (or `stderr`) hands the
 * bytes to the sink registered for `<token>` instead of writing a file. The shell runner redirects every top-level
 * statement of a script there, which is how output streams while the script runs as one `exec`.
 */
export class StatementOutputFileSystem {
  private readonly sinks = new Map<string, OpenSink>();
  /** The filesystem to give just-bash. */
  readonly fileSystem: IFileSystem;

  constructor(base: IFileSystem) {
    const sinks = this.sinks;
    this.fileSystem = new Proxy(base, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (property !== "appendFile" && property !== "writeFile") return typeof value === "function" ? value.bind(target) : value;
        const original = value as (path: string, content: unknown, options?: unknown) => Promise<void>;
        return (path: string, content: unknown, options?: unknown): Promise<void> => {
          if (!path.startsWith(`${OUTPUT_STREAM_ROOT}/`)) return original.call(target, path, content, options);
          const [token, stream] = path.slice(OUTPUT_STREAM_ROOT.length + 1).split("/");
          const sink = sinks.get(token ?? "");
          if (!sink) return Promise.resolve();
          const isError = stream === "stderr";
          const bytes = contentBytes(content, isError ? sink.stderrEncoder : sink.stdoutEncoder);
          if (bytes.byteLength > 0) (isError ? sink.onStderr : sink.onStdout)(bytes);
          return Promise.resolve();
        };
      },
    });
  }

  /** Turns leftover output of a run (not carried by a redirection) into bytes with the run's encoders. */
  encodeLeftover(token: string, stream: "stdout" | "stderr", text: string): Uint8Array {
    const sink = this.sinks.get(token);
    return sink ? (stream === "stderr" ? sink.stderrEncoder : sink.stdoutEncoder).encode(text) : new TextEncoder().encode(text);
  }

  /** Registers a sink; returns the two paths to redirect to and a function that forgets the sink. */
  open(token: string, sink: OutputStreamSink): { stdoutPath: string; stderrPath: string; close: () => void } {
    this.sinks.set(token, { ...sink, stdoutEncoder: new OutputEncoder(), stderrEncoder: new OutputEncoder() });
    return {
      stdoutPath: `${OUTPUT_STREAM_ROOT}/${token}/stdout`,
      stderrPath: `${OUTPUT_STREAM_ROOT}/${token}/stderr`,
      close: () => this.sinks.delete(token),
    };
  }
}
