import { shellQuote } from "../posix/shell-quote.js";
import source from "./sbx_agent.py";

/** The sbx sandbox agent's Python source (stdlib only, Python ≥ 3.8), injected with `python3 -I -u -c`. Protocol 1. */
export const SBX_AGENT_SOURCE: string = source;

/** The protocol version this copy of core speaks; the agent announces its own in `hello`. */
export const SBX_AGENT_PROTOCOL = 1;

/**
 * The command line that starts the agent through a driver's `spawn` (`sh -c`). It says clearly when python3 is
 * missing (exit 127) so the host can raise `RuntimeMissingError` instead of a vague failure. Nothing is written to
 * the sandbox's disk: the source travels on the command line.
 */
export function agentCommandLine(): string {
  return `command -v python3 >/dev/null 2>&1 || { echo "sbx-agent: python3 not found on PATH" >&2; exit 127; }; exec python3 -I -u -c ${shellQuote(SBX_AGENT_SOURCE)}`;
}
