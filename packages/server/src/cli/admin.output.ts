/** Where a command writes: stdout for results (scripts read it), stderr for messages and warnings. */
export interface AdminOutput {
  out(text: string): void;
  err(text: string): void;
}

/** Writes to the process's streams. */
export const processOutput: AdminOutput = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
};

/** One JSON document on stdout, for `--json`. */
export function printJson(output: AdminOutput, value: unknown): void {
  output.out(`${JSON.stringify(value, null, 2)}\n`);
}

/** Aligned columns with a header row; control characters in values are escaped so a row stays one line. */
export function printTable(
  output: AdminOutput,
  columns: readonly { header: string; value: (row: any) => string }[],
  rows: readonly unknown[],
): void {
  const cells = rows.map((row) => columns.map((column) => printable(column.value(row))));
  const widths = columns.map((column, i) => Math.max(column.header.length, ...cells.map((r) => r[i].length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  output.out(`${[line(columns.map((c) => c.header)), ...cells.map(line)].join('\n')}\n`);
}

/** "key: value" lines, aligned. */
export function printFields(output: AdminOutput, fields: readonly [string, string][]): void {
  const width = Math.max(...fields.map(([label]) => label.length)) + 1;
  output.out(fields.map(([label, value]) => `  ${`${label}:`.padEnd(width)} ${printable(value)}`).join('\n') + '\n');
}

function printable(value: string): string {
  return value.replace(/[\u0000-\u001f\u007f]/g, (c) => JSON.stringify(c).slice(1, -1));
}
