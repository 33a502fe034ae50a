import type { ListedSandbox } from "@sbx/core";
import type { SandboxDriverV1 } from "@sbx/core/adapter";

/** One live fake sandbox as the process-wide directory knows it. */
interface DirectoryEntry {
  readonly driver: SandboxDriverV1;
  readonly labels: Readonly<Record<string, string>>;
  readonly createdAt: string;
  readonly name: string | null;
}

/**
 * Every live fake sandbox of this process (the fake's sandboxes exist only in it), for `listSandboxes` and
 * `getOrCreateSandbox` (ADR 0050). Names are claimed synchronously, so of two callers racing for one name in this
 * process exactly one creates; the other waits for that create and gets the same sandbox.
 */
export class FakeDirectory {
  private readonly entries = new Map<string, DirectoryEntry>();
  private readonly names = new Map<string, Promise<SandboxDriverV1>>();

  /** Records a live sandbox. */
  add(driver: SandboxDriverV1, labels: Readonly<Record<string, string>>, name: string | null): void {
    this.entries.set(driver.id, { driver, labels: { ...labels }, createdAt: new Date().toISOString(), name });
  }

  /** Forgets a destroyed sandbox (and frees its name). */
  remove(id: string): void {
    const entry = this.entries.get(id);
    this.entries.delete(id);
    if (entry?.name !== null && entry?.name !== undefined) this.names.delete(entry.name);
  }

  /** The live sandboxes carrying every one of `labels`. */
  list(labels: Readonly<Record<string, string>>): ListedSandbox[] {
    return [...this.entries.values()]
      .filter((entry) => Object.entries(labels).every(([key, value]) => entry.labels[key] === value))
      .map((entry) => ({
        id: entry.driver.id,
        labels: { ...entry.labels },
        createdAt: entry.createdAt,
        state: "running" as const,
        name: entry.name,
      }));
  }

  /** The live sandbox named `name`, or the one `create` makes now: the name is claimed before `create` runs. */
  async getOrCreate(name: string, create: () => Promise<SandboxDriverV1>): Promise<{ driver: SandboxDriverV1; created: boolean }> {
    const existing = this.names.get(name);
    if (existing) {
      const driver = await existing;
      return { driver, created: false };
    }
    const creating = create();
    this.names.set(name, creating);
    try {
      return { driver: await creating, created: true };
    } catch (error) {
      this.names.delete(name);
      throw error;
    }
  }
}

/** The process-wide directory of fake sandboxes. */
export const fakeDirectory = new FakeDirectory();
