/**
 * Kubernetes label selectors in their query-string form (`a=b,c!=d,e,!f`), and field selectors on
 * `involvedObject.name` for events. Set-based selectors (`in`, `notin`) are refused rather than misread.
 */

/** One parsed requirement. */
type Requirement = { key: string; operator: "equals" | "notEquals" | "exists" | "notExists"; value?: string };

/** Parses a selector; throws on a form the emulator does not implement. */
export function parseLabelSelector(selector: string | null | undefined): Requirement[] {
  if (!selector) return [];
  return selector
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part): Requirement => {
      if (/\s(in|notin)\s/.test(part)) throw new Error(`set-based selector not supported by the emulator: ${part}`);
      if (part.includes("!=")) {
        const [key, value] = part.split("!=");
        return { key: key!.trim(), operator: "notEquals", value: value!.trim() };
      }
      const equals = part.includes("==") ? "==" : part.includes("=") ? "=" : undefined;
      if (equals) {
        const [key, value] = part.split(equals);
        return { key: key!.trim(), operator: "equals", value: value!.trim() };
      }
      if (part.startsWith("!")) return { key: part.slice(1), operator: "notExists" };
      return { key: part, operator: "exists" };
    });
}

/** Whether `labels` satisfy every requirement. */
export function matchesLabels(requirements: readonly Requirement[], labels: Readonly<Record<string, string>> | undefined): boolean {
  const present = labels ?? {};
  return requirements.every((requirement) => {
    const value = present[requirement.key];
    switch (requirement.operator) {
      case "equals":
        return value === requirement.value;
      case "notEquals":
        return value !== requirement.value;
      case "exists":
        return value !== undefined;
      case "notExists":
        return value === undefined;
    }
  });
}

/** Whether a `matchLabels` map (a NetworkPolicy's podSelector) selects `labels`; an empty map selects every pod. */
export function matchLabelsSelects(matchLabels: Readonly<Record<string, string>> | undefined, labels: Readonly<Record<string, string>> | undefined) {
  return Object.entries(matchLabels ?? {}).every(([key, value]) => labels?.[key] === value);
}
