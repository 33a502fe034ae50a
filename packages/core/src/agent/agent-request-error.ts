import { CodeInterpreterLostError, InvalidArgumentError, ProviderError } from "../errors/index.js";
import type { AgentFrame } from "./agent-frames.js";

/** Longest part of the agent's error message kept in the host's error (the agent is sandbox code). */
const MESSAGE_CHARACTERS = 2000;

/**
 * The typed error for an agent's `error` answer (or any unexpected answer) to a request about `contextId`:
 * `context-lost` is `CodeInterpreterLostError`, `unknown-context` an `InvalidArgumentError` on `options.contextId`,
 * anything else a `ProviderError` naming the agent's code.
 */
export function agentRequestError(frame: AgentFrame, contextId: string | null, backend: string): Error {
  const { header } = frame;
  const message = typeof header.message === "string" ? header.message.slice(0, MESSAGE_CHARACTERS) : "no message";
  if (header.code === "context-lost") return new CodeInterpreterLostError({ backend, contextId, reason: message });
  if (header.code === "unknown-context")
    return new InvalidArgumentError({ backend, field: "options.contextId", message: `Invalid options.contextId: ${message}.` });
  return new ProviderError({ backend, message: `The sbx sandbox agent refused the request (${String(header.code)}): ${message}` });
}
