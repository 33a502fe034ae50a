import type { CliEnvironment, OutputMode } from "./terminal.js";
import { formatBytes } from "./terminal.js";

const BAR_WIDTH = 24;
const REDRAW_INTERVAL_MS = 80;

/**
 * Progress of one long piece of work (an image pull, an upload), on stderr. On a terminal: one line redrawn
 * in place (`\r`) with a bar; otherwise plain lines at the start, every quarter and the end, so logs stay
 * readable. Silent with `--quiet` or `--json`.
 */
export class ProgressDisplay {
  private lastDraw = 0;
  private lastQuarter = -1;
  private drawn = false;
  private finished = false;

  constructor(
    private readonly environment: CliEnvironment,
    private readonly mode: OutputMode,
    /** What is being done, for example `upload data.csv`. */
    private readonly label: string,
  ) {}

  private get enabled(): boolean {
    return !this.mode.quiet && !this.mode.json;
  }

  private get terminal(): boolean {
    return this.environment.stderr.isTTY === true;
  }

  /** Reports `current` of `total` bytes done (`total` 0 when unknown). */
  update(current: number, total: number): void {
    if (!this.enabled || this.finished) return;
    const fraction = total > 0 ? Math.min(1, current / total) : 0;
    if (this.terminal) {
      const now = Date.now();
      if (this.drawn && now - this.lastDraw < REDRAW_INTERVAL_MS && fraction < 1) return;
      this.lastDraw = now;
      this.drawn = true;
      this.environment.stderr.write(`\r\u001b[2K${this.render(current, total, fraction)}`);
      return;
    }
    const quarter = total > 0 ? Math.floor(fraction * 4) : 0;
    if (quarter > this.lastQuarter && quarter < 4) {
      this.lastQuarter = quarter;
      this.environment.stderr.write(
        `sbx: ${this.label}: ${total > 0 ? `${Math.round(fraction * 100)}% (${formatBytes(current)} of ${formatBytes(total)})` : `${formatBytes(current)}`}\n`,
      );
    }
  }

  /** Ends the display with a final line. */
  finish(summary: string): void {
    if (!this.enabled || this.finished) return;
    this.finished = true;
    if (this.terminal) this.environment.stderr.write(`\r\u001b[2K${this.label} [${"#".repeat(BAR_WIDTH)}] 100% ${summary}\n`);
    else this.environment.stderr.write(`sbx: ${this.label}: done, ${summary}\n`);
  }

  /** Ends the display after a failure: on a terminal, moves off the half-drawn bar so the error starts on its own line. */
  abandon(): void {
    if (!this.enabled || this.finished) return;
    this.finished = true;
    if (this.terminal && this.drawn) this.environment.stderr.write("\n");
  }

  private render(current: number, total: number, fraction: number): string {
    if (total <= 0) return `${this.label} ${formatBytes(current)}`;
    const filled = Math.round(fraction * BAR_WIDTH);
    return `${this.label} [${"#".repeat(filled)}${".".repeat(BAR_WIDTH - filled)}] ${String(Math.round(fraction * 100)).padStart(3)}% ${formatBytes(current)}/${formatBytes(total)}`;
  }
}

/** Sums Docker pull events (per layer `current`/`total`) into one byte count for the display. */
export class PullProgressAggregator {
  private readonly layers = new Map<string, { current: number; total: number }>();

  /** Records one engine event and returns the totals over every layer seen so far. */
  add(event: { id?: string; status: string; progressDetail?: { current?: number; total?: number } }): { current: number; total: number } {
    if (
      event.id &&
      event.progressDetail &&
      typeof event.progressDetail.total === "number" &&
      event.progressDetail.total > 0 &&
      /download/i.test(event.status)
    ) {
      this.layers.set(event.id, { current: Math.max(0, event.progressDetail.current ?? 0), total: event.progressDetail.total });
    } else if (event.id && /download complete|pull complete|already exists/i.test(event.status)) {
      const layer = this.layers.get(event.id);
      if (layer) layer.current = layer.total;
    }
    let current = 0;
    let total = 0;
    for (const layer of this.layers.values()) {
      current += Math.min(layer.current, layer.total);
      total += layer.total;
    }
    return { current, total };
  }
}
