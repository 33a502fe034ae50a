/**
 * The gRPC service definitions of the `modal` JS SDK (0.11.1), taken from the SDK's own bundle so the emulator's
 * wire format is exactly what the client under test speaks. The bundle does not export them, so its CommonJS build
 * is compiled once more, as its own module, with one line appended that exports the two ts-proto definitions.
 * Bare imports inside the bundle resolve from the `modal` package's own folder (its `node_modules`).
 */
import Module, { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { dirname } from "node:path";

/** A ts-proto generic service definition, as nice-grpc's `createServer().add()` accepts it. */
export interface TsProtoServiceDefinition {
  readonly name: string;
  readonly fullName: string;
  readonly methods: Record<
    string,
    {
      readonly name: string;
      readonly requestStream: boolean;
      readonly responseStream: boolean;
      readonly requestType: unknown;
      readonly responseType: unknown;
    }
  >;
}

/** The two services the SDK calls. */
export interface ModalServiceDefinitions {
  /** `modal.client.ModalClient`: the control plane (267 methods in 0.11.1). */
  readonly controlPlane: TsProtoServiceDefinition;
  /** `modal.task_command_router.TaskCommandRouter`: exec, stdio and files, served by the "worker" (23 methods). */
  readonly taskCommandRouter: TsProtoServiceDefinition;
  /** The `modal` version the definitions came from. */
  readonly sdkVersion: string;
}

/** The SDK version the emulator is built against; the bundle's variable names are version specific. */
export const MODAL_SDK_VERSION = "0.11.1";

let cached: ModalServiceDefinitions | undefined;

/** Loads (once) the service definitions from the installed `modal` package. */
export function loadModalDefinitions(): ModalServiceDefinitions {
  if (cached) return cached;
  const require = createRequire(import.meta.url);
  const bundlePath = require.resolve("modal");
  const packageJson = JSON.parse(readFileSync(`${dirname(bundlePath)}/../package.json`, "utf8")) as { version: string };
  if (packageJson.version !== MODAL_SDK_VERSION) {
    throw new Error(`modal emulator: built against modal@${MODAL_SDK_VERSION}, found modal@${packageJson.version} at ${bundlePath}`);
  }
  const source = `${readFileSync(bundlePath, "utf8")}\nmodule.exports.__sbxEmulatorDefinitions = { ModalClientDefinition, TaskCommandRouterDefinition };\n`;
  const compiled = new Module(bundlePath) as Module & { _compile(source: string, filename: string): void; paths: string[] };
  compiled.filename = bundlePath;
  compiled.paths = (Module as unknown as { _nodeModulePaths(from: string): string[] })._nodeModulePaths(dirname(bundlePath));
  compiled._compile(source, bundlePath);
  const definitions = (
    compiled.exports as {
      __sbxEmulatorDefinitions: { ModalClientDefinition: TsProtoServiceDefinition; TaskCommandRouterDefinition: TsProtoServiceDefinition };
    }
  ).__sbxEmulatorDefinitions;
  cached = {
    controlPlane: definitions.ModalClientDefinition,
    taskCommandRouter: definitions.TaskCommandRouterDefinition,
    sdkVersion: packageJson.version,
  };
  return cached;
}
