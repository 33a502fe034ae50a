/**
 * How the real CLI fails (swift-argument-parser 1.8.2 and `Application.main`): a parse or validation error exits 64
 * with `Error: <message>` and a usage line; every runtime error exits 1 with `Error: <description>`.
 */
export class CliFailure extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 64,
  ) {
    super(message);
  }
}

/** A parse or validation error (exit 64), with the command's usage line. */
export function usageError(message: string, command: string): CliFailure {
  return new CliFailure(`Error: ${message}\nUsage: container ${command} [<options>]\n  See 'container ${command} --help' for more information.`, 64);
}

/** A runtime error (exit 1) in ContainerizationError's form: `Error: <code>: "<message>"`. */
export function runtimeError(code: string, message: string): CliFailure {
  return new CliFailure(`Error: ${code}: "${message}"`, 1);
}

/** The text every API command prints when the API server does not answer (`Application.swift`'s rewrite). */
export const SERVICE_DOWN_TEXT =
  'Error: interrupted: "XPC connection error: Connection invalid"\nEnsure container system service has been started with `container system start`.';
