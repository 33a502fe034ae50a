/** Helpers to serve a ts-proto service definition with nice-grpc: stubs for every method the emulator does not implement. */
import { ServerError, Status } from "nice-grpc";
import type { TsProtoServiceDefinition } from "./modal-definitions.js";

/** Any handler nice-grpc accepts (unary, server-streaming, client-streaming). */
export type Handler = (...args: never[]) => unknown;

/**
 * Fills every method of `definition` missing from `handlers` with a stub answering UNIMPLEMENTED (not retried by
 * the SDK, so a missing method shows up at once, named). nice-grpc binds every method of the definition.
 */
export function withUnimplementedStubs(definition: TsProtoServiceDefinition, handlers: Record<string, Handler>): Record<string, Handler> {
  const implementation: Record<string, Handler> = {};
  for (const [key, method] of Object.entries(definition.methods)) {
    const handler = handlers[key];
    if (handler) {
      implementation[key] = handler;
      continue;
    }
    const message = `the modal emulator does not implement ${definition.fullName}/${method.name}`;
    implementation[key] = method.responseStream
      ? // eslint-disable-next-line require-yield -- a server-streaming handler that fails before its first message
        async function* unimplemented() {
          throw new ServerError(Status.UNIMPLEMENTED, message);
        }
      : async () => {
          throw new ServerError(Status.UNIMPLEMENTED, message);
        };
  }
  return implementation;
}

/** An unsigned JWT-shaped token with an `exp` an hour ahead (the SDK reads only `exp`). */
export function jwtLikeToken(subject: string): string {
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${encode({ alg: "none", typ: "JWT" })}.${encode({ sub: subject, exp: Math.floor(Date.now() / 1000) + 3600 })}.emulator`;
}
