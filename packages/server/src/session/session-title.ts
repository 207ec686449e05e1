/** How long a title taken from a message may be, its ellipsis included. */
export const MAX_DERIVED_TITLE_LENGTH = 80;

/** Control characters, line and paragraph separators, and bidirectional overrides: none belongs in a title. */
const UNTITLED = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;

/**
 * The title a session takes from its first message: the text's first line that has any, its whitespace
 * collapsed and its control characters removed, at most MAX_DERIVED_TITLE_LENGTH characters (code points)
 * with an ellipsis when cut. Undefined when the text has nothing to show.
 */
export function sessionTitleOf(text: string): string | undefined {
  const line = text
    .split(/\r\n|[\n\r\u2028\u2029]/)
    .map((candidate) =>
      candidate
        .replace(/[\t\v\f]/g, ' ')
        .replace(UNTITLED, '')
        .replace(/\s+/g, ' ')
        .trim(),
    )
    .find((candidate) => candidate !== '');
  if (line === undefined) return undefined;
  const characters = Array.from(line);
  if (characters.length <= MAX_DERIVED_TITLE_LENGTH) return line;
  return `${characters
    .slice(0, MAX_DERIVED_TITLE_LENGTH - 1)
    .join('')
    .trimEnd()}…`;
}
