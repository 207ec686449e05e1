import { stripAnsi } from './terminal.js';

/** Rows as aligned columns (header first); cells may carry colours. */
export function table(header: string[], rows: string[][]): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((row) => stripAnsi(row[i] ?? '').length)));
  return all
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell + ' '.repeat(widths[i] - stripAnsi(cell).length)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** `key: value` lines, keys aligned. */
export function fields(entries: [string, string][]): string {
  const width = Math.max(...entries.map(([key]) => key.length));
  return entries.map(([key, value]) => `${`${key}:`.padEnd(width + 1)} ${value}`).join('\n');
}
