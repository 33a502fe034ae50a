import { readFileSync } from "node:fs";

/** The kernel's "unset" loginuid (4294967295, `(uid_t)-1`). */
export const UNSET_LOGINUID = "4294967295";

/** This test process's loginuid, or null where the kernel has none. */
export function ownLoginuid(): string | null {
  try {
    return readFileSync("/proc/self/loginuid", "utf8").trim();
  } catch {
    return null;
  }
}
