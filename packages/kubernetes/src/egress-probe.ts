/**
 * The create-time proof that the deny-all NetworkPolicy is enforced (ADR 0048): from inside the Pod, before any
 * caller code runs, try TCP connections to addresses every Pod can reach when egress is open: the API server's
 * Service (`KUBERNETES_SERVICE_HOST`, which the kubelet injects into every container), the node's kubelet
 * (`status.hostIP`:10250) and any `probeTargets` from settings. A connection, or a refusal (a RST came back, so the
 * packet got there), means the policy is not enforced. A timeout or "unreachable" means it is, for the paths sampled.
 */

/** Seconds each connection attempt may take. */
export const PROBE_CONNECT_TIMEOUT_SECONDS = 2;

/** The Python probe: argv targets `host:port`; prints one JSON object per target. */
export const EGRESS_PROBE_SCRIPT = `
import json, os, socket, sys
targets = list(sys.argv[1:])
host = os.environ.get("KUBERNETES_SERVICE_HOST")
if host:
    targets.insert(0, "%s:%s" % (host, os.environ.get("KUBERNETES_SERVICE_PORT", "443")))
for target in targets:
    address, _, port = target.rpartition(":")
    try:
        socket.create_connection((address, int(port)), ${PROBE_CONNECT_TIMEOUT_SECONDS}).close()
        outcome = "connected"
    except ConnectionRefusedError:
        outcome = "refused"
    except socket.timeout:
        outcome = "timeout"
    except OSError as error:
        outcome = "blocked: %s" % (error.strerror or error)
    print(json.dumps({"target": target, "outcome": outcome}), flush=True)
`;

/** One probed path. */
export interface ProbeOutcome {
  readonly target: string;
  readonly outcome: string;
}

/** Parses the probe's output; lines that are not its JSON are ignored. */
export function parseProbeOutput(output: string): ProbeOutcome[] {
  const outcomes: ProbeOutcome[] = [];
  for (const line of output.split("\n")) {
    try {
      const parsed = JSON.parse(line) as Partial<ProbeOutcome>;
      if (typeof parsed.target === "string" && typeof parsed.outcome === "string") outcomes.push({ target: parsed.target, outcome: parsed.outcome });
    } catch {
      continue;
    }
  }
  return outcomes;
}

/** The paths the probe reached (connected or refused): any one means the policy is not enforced. */
export function reachedPaths(outcomes: readonly ProbeOutcome[]): ProbeOutcome[] {
  return outcomes.filter((outcome) => outcome.outcome === "connected" || outcome.outcome === "refused");
}
