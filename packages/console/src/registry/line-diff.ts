/** One line of a diff from `yours` to `theirs`: kept, only yours (removed), only theirs (added). */
export interface DiffLine {
  op: ' ' | '-' | '+';
  text: string;
}

/** Past this many lines on either side the diff is every line of yours removed and theirs added. */
const MAX_LINES = 2000;

/** A line diff by longest common subsequence (specs are short; the table is at most MAX_LINES²). */
export function lineDiff(yours: string, theirs: string): DiffLine[] {
  const a = yours.split('\n');
  const b = theirs.split('\n');
  if (a.length > MAX_LINES || b.length > MAX_LINES) {
    return [...a.map((text) => ({ op: '-' as const, text })), ...b.map((text) => ({ op: '+' as const, text }))];
  }
  // common[i][j]: the longest common subsequence of a[i..] and b[j..].
  const common = Array.from({ length: a.length + 1 }, () => new Uint16Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      common[i][j] = a[i] === b[j] ? common[i + 1][j + 1] + 1 : Math.max(common[i + 1][j], common[i][j + 1]);
    }
  }
  const lines: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      lines.push({ op: ' ', text: a[i] });
      i++;
      j++;
    } else if (i < a.length && (j === b.length || common[i + 1][j] >= common[i][j + 1])) {
      lines.push({ op: '-', text: a[i++] });
    } else {
      lines.push({ op: '+', text: b[j++] });
    }
  }
  return lines;
}
