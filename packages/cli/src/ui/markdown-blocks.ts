/**
 * Where a streaming Markdown answer can be cut: after its last finished block (a paragraph or list
 * ended by a blank line, a code fence closed), so that what is before the cut renders the same
 * whatever comes after it. The rest, the unfinished tail, is still being written.
 */
export function finishedBlocks(text: string): { done: string; tail: string } {
  let cut = 0;
  let fence: string | undefined;
  let at = 0;
  for (;;) {
    const end = text.indexOf('\n', at);
    // The last line has no newline yet: it is still being written.
    if (end < 0) break;
    const line = text.slice(at, end);
    const opener = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (fence === undefined && opener) {
      fence = opener[1];
    } else if (fence !== undefined) {
      // A fence closes with a run of its own character at least as long, and nothing after it.
      const closer = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(line);
      if (closer && closer[1][0] === fence[0] && closer[1].length >= fence.length) {
        fence = undefined;
        cut = end + 1;
      }
    } else if (line.trim() === '' && at > cut) {
      cut = end + 1;
    }
    at = end + 1;
  }
  return { done: text.slice(0, cut), tail: text.slice(cut) };
}
