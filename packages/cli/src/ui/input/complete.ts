/**
 * What Tab completes: a slash command when the text starts with `/`, otherwise the path under the
 * cursor, inside the workspace only. Names come from the disk and may be hostile: one holding a
 * control character is skipped, a link is never followed out of the workspace, and a huge folder
 * is read only so far.
 */
import { opendir, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';

export interface CompletionCandidate {
  /** What the list shows and the text would get (a folder ends in `/`). */
  label: string;
  /** A one-line description (a command's help). */
  help?: string;
}

/** `text[from, to)` is to become `insert`; `candidates` are listed when there is more than one. */
export interface Completion {
  from: number;
  to: number;
  insert: string;
  candidates: CompletionCandidate[];
}

/** The completion for the text and cursor, or undefined when there is none. */
export type Completer = (text: string, cursor: number) => Promise<Completion | undefined>;

export interface SlashCommand {
  /** With or without its leading `/`. */
  name: string;
  help: string;
}

export interface CompleterOptions {
  commands: readonly SlashCommand[];
  /** The workspace: paths are completed below it and nowhere else. */
  root: string;
}

/** The most entries of one folder read (a folder of a million files must not hold up a key). */
export const ENTRY_LIMIT = 5000;

// Controls (C0, DEL, C1), characters that reorder or hide text, and U+FFFD (bytes that are not UTF-8, which
// could not be written back as they are): a name holding one is not offered.
const UNSAFE_NAME = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufffd]/;

export function createCompleter(options: CompleterOptions): Completer {
  const commands = options.commands.map((command) => ({
    name: command.name.startsWith('/') ? command.name : `/${command.name}`,
    help: command.help,
  }));
  return async (text, cursor) => {
    // A first word with a second slash is an absolute path, not a command.
    if (text.startsWith('/') && !/[\s/]/.test(text.slice(1, cursor))) return completeCommand(commands, text, cursor);
    return completePath(options.root, text, cursor);
  };
}

function completeCommand(commands: SlashCommand[], text: string, cursor: number): Completion | undefined {
  const typed = text.slice(0, cursor);
  const matches = commands.filter((command) => command.name.startsWith(typed));
  if (matches.length === 0) return undefined;
  const names = matches.map((command) => command.name);
  const insert = matches.length === 1 ? `${names[0]} ` : commonPrefix(names);
  return {
    from: 0,
    to: cursor,
    insert,
    candidates: matches.length === 1 ? [] : matches.map(({ name, help }) => ({ label: name, help })),
  };
}

async function completePath(root: string, text: string, cursor: number): Promise<Completion | undefined> {
  const from = wordStart(text, cursor);
  // A space in a path is written `\ `, as in a shell, so that the path stays one word.
  const word = text.slice(from, cursor).replace(/\\ /g, ' ');
  const slash = word.lastIndexOf('/');
  const folderPart = word.slice(0, slash + 1);
  const base = word.slice(slash + 1);
  if (folderPart.startsWith('~')) return undefined;

  let workspace: string;
  try {
    workspace = await realpath(root);
  } catch {
    return undefined;
  }
  // The folder typed, resolved with its links, must still be the workspace or below it.
  const folder = await realpathInside(
    workspace,
    isAbsolute(folderPart) ? folderPart : resolve(workspace, folderPart || '.'),
  );
  if (folder === undefined) return undefined;

  const entries = await listFolder(folder, base);
  if (entries.length === 0) return undefined;
  const labels = await Promise.all(
    entries.map(async ({ name, folder: isFolder, look }) =>
      isFolder || (look && (await isFolderInside(workspace, join(folder, name)))) ? `${name}/` : name,
    ),
  );
  labels.sort();
  const insert = (folderPart + (labels.length === 1 ? labels[0] : commonPrefix(labels))).replace(/ /g, '\\ ');
  return {
    from,
    to: cursor,
    insert,
    candidates: labels.length === 1 ? [] : labels.map((label) => ({ label })),
  };
}

/** Where the word before the cursor starts: after the last space (not one escaped as `\ `) or line break. */
function wordStart(text: string, cursor: number): number {
  let at = cursor;
  while (at > 0 && (!/\s/.test(text[at - 1]) || (text[at - 1] === ' ' && text[at - 2] === '\\'))) at -= 1;
  return at;
}

/** `path` with its links resolved, when that is `workspace` or below it; undefined otherwise (or when it is missing). */
async function realpathInside(workspace: string, path: string): Promise<string | undefined> {
  let real: string;
  try {
    real = await realpath(path);
  } catch {
    return undefined;
  }
  const inside = relative(workspace, real);
  if (inside === '') return real;
  return inside.startsWith(`..${sep}`) || inside === '..' || isAbsolute(inside) ? undefined : real;
}

/** Whether `path` is a folder inside the workspace (a link to a folder outside is not: it is not followed). */
async function isFolderInside(workspace: string, path: string): Promise<boolean> {
  const real = await realpathInside(workspace, path);
  if (real === undefined) return false;
  try {
    return (await stat(real)).isDirectory();
  } catch {
    return false;
  }
}

interface Entry {
  name: string;
  folder: boolean;
  look: boolean;
}

/** The names in `folder` starting with `base` (hidden ones only when `base` starts with a dot), at most ENTRY_LIMIT read. */
async function listFolder(folder: string, base: string): Promise<Entry[]> {
  const names: Entry[] = [];
  let read = 0;
  try {
    const dir = await opendir(folder, { bufferSize: 256 });
    try {
      for (let entry = await dir.read(); entry !== null && read < ENTRY_LIMIT; entry = await dir.read()) {
        read += 1;
        const { name } = entry;
        if (!name.startsWith(base) || UNSAFE_NAME.test(name)) continue;
        if (name.startsWith('.') && !base.startsWith('.')) continue;
        // A link, or an entry whose type the file system did not say, is looked at before it is called a folder.
        const look = entry.isSymbolicLink() || !(entry.isFile() || entry.isDirectory());
        names.push({ name, folder: entry.isDirectory(), look });
      }
    } finally {
      await dir.close();
    }
  } catch {
    return [];
  }
  return names;
}

function commonPrefix(words: string[]): string {
  let prefix = words[0] ?? '';
  for (const word of words) {
    while (!word.startsWith(prefix)) prefix = prefix.slice(0, -1);
  }
  return prefix;
}
