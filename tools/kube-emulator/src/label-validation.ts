/**
 * The API server's validation of `metadata.labels` (a qualified-name key, a label value), so a client writing a label
 * Kubernetes refuses gets the real server's 422 `Invalid` here too, not a silent acceptance.
 */

/** A label value, or the name part of a key: 63 characters at most, alphanumerics at both ends, `-`, `_`, `.` inside. */
const LABEL_NAME = /^(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)$/;
/** A key's optional prefix: a lowercase DNS subdomain of at most 253 characters. */
const DNS_SUBDOMAIN = /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*$/;

/** Why `labels` are invalid, as the API server words it (`metadata.labels: Invalid value: ...`), or undefined when valid. */
export function invalidLabelReason(labels: unknown): string | undefined {
  if (labels === undefined || labels === null) return undefined;
  if (typeof labels !== "object" || Array.isArray(labels)) return "metadata.labels: Invalid value: must be a map of strings";
  for (const [key, value] of Object.entries(labels as Record<string, unknown>)) {
    const slash = key.lastIndexOf("/");
    const prefix = slash === -1 ? undefined : key.slice(0, slash);
    const name = slash === -1 ? key : key.slice(slash + 1);
    if (!LABEL_NAME.test(name) || (prefix !== undefined && (prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))))
      return `metadata.labels: Invalid value: ${JSON.stringify(key)}: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (at most 63 characters), with an optional DNS subdomain prefix`;
    if (typeof value !== "string" || (value !== "" && !LABEL_NAME.test(value)))
      return `metadata.labels: Invalid value: ${JSON.stringify(value)}: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (at most 63 characters)`;
  }
  return undefined;
}
