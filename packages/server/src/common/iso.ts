/** An instant as the API shows it: ISO 8601 in UTC, to the millisecond. */
export function iso(value: Date | string): string {
  return new Date(value).toISOString();
}

/** iso, keeping null (an instant that has not happened: a key never revoked, never used). */
export function isoOrNull(value: Date | string | null): string | null {
  return value === null ? null : iso(value);
}
