/** Reads the envd user the SDK asks for (`Authorization: Basic base64("<user>:")`). */
import type { IncomingMessage } from "node:http";
import { DEFAULT_USER } from "./container-sandbox.js";

/** The user a request runs as: from Basic auth, else the `username` query, else "user". */
export function userFromRequest(request: IncomingMessage, queryUser?: string | null): string {
  const header = request.headers.authorization;
  if (header?.startsWith("Basic ")) {
    const decoded = Buffer.from(header.slice(6), "base64").toString("utf8");
    const user = decoded.split(":")[0];
    if (user) return validateUser(user);
  }
  if (queryUser) return validateUser(queryUser);
  return DEFAULT_USER;
}

function validateUser(user: string): string {
  if (!/^[a-z_][a-z0-9_-]*\$?$/i.test(user)) throw new Error(`invalid user name ${JSON.stringify(user)}`);
  return user;
}
