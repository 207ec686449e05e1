import { constants, type Stats } from 'node:fs';
import { lstat, mkdir, open, rename, rm, unlink } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import { REGISTRY_KINDS, REGISTRY_NAME_PATTERN } from '@cleveragents/contract';

/**
 * The only places a registry folder's files may be: `<kind>/<name>.yaml`, a kind of the contract and a
 * name of the registry's grammar, each checked before it becomes a path (names come from the server and
 * from files a cloned repository carries). Nothing is read, written or removed through a symbolic link:
 * a link for a kind directory or an entry file is refused, files are opened with O_NOFOLLOW.
 */

/** The largest entry file read: the server's default request body (CLEVERAGENTS_MAX_BODY_BYTES, 1 MiB). */
export const MAX_ENTRY_FILE_BYTES = 1024 * 1024;
/** The most entry files a folder may hold (the largest registry one folder mirrors). */
export const MAX_ENTRY_FILES = 10_000;
/** The largest state file read: its line per entry, for MAX_ENTRY_FILES entries, many times over. */
export const MAX_STATE_FILE_BYTES = 16 * 1024 * 1024;

export const NAME_RULE = 'must be a registry name: 1 to 64 of a-z, 0-9, "_" and "-", starting with a letter or digit';
export const KIND_RULE = `must be one of ${REGISTRY_KINDS.join(', ')}`;

/** A file of the folder that cannot be used: the problem, with the field when there is one. */
export class EntryFileError extends Error {
  constructor(
    readonly file: string,
    readonly field: string | undefined,
    readonly problem: string,
  ) {
    super(`${file}: ${field ? `${field}: ` : ''}${problem}`);
    this.name = 'EntryFileError';
  }
}

/** An untrusted value for a message: quoted, cut short, every character outside printable ASCII escaped. */
export function quoted(value: unknown): string {
  const text = typeof value === 'string' ? value : String(JSON.stringify(value));
  const escaped = text
    .slice(0, 80)
    .replace(/["\\]/g, (c) => `\\${c}`)
    .replace(/[^\x20-\x7e]/g, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
  return `"${escaped}"${text.length > 80 ? '...' : ''}`;
}

/** What is wrong with a kind and name as an entry of the folder, or undefined when both are fine. */
export function keyProblem(kind: unknown, name: unknown): { field: 'kind' | 'name'; problem: string } | undefined {
  if (typeof kind !== 'string' || !(REGISTRY_KINDS as readonly string[]).includes(kind)) {
    return { field: 'kind', problem: `${quoted(kind)} ${KIND_RULE}` };
  }
  if (typeof name !== 'string' || !REGISTRY_NAME_PATTERN.test(name)) {
    return { field: 'name', problem: `${quoted(name)} ${NAME_RULE}` };
  }
  return undefined;
}

/** The path of an entry's file, refused unless the key is of the grammar and the path inside `dir`. */
export function entryPath(dir: string, kind: string, name: string): string {
  const bad = keyProblem(kind, name);
  if (bad) throw new EntryFileError(`${quoted(kind)}/${quoted(name)}`, bad.field, bad.problem);
  const path = join(dir, kind, `${name}.yaml`);
  const inside = relative(dir, path);
  // The grammar already keeps it inside; this is the last word should the grammar ever widen.
  if (inside.startsWith(`..${sep}`) || inside === '..' || isAbsolute(inside)) {
    throw new EntryFileError(`${kind}/${name}.yaml`, undefined, 'leads outside the registry folder');
  }
  return path;
}

function linkRefusal(file: string): EntryFileError {
  return new EntryFileError(
    file,
    undefined,
    'is a symbolic link; a registry folder holds none (replace it by the file)',
  );
}

/**
 * A kind's directory, checked to be a real directory of the folder (not a link): made when `create` and
 * missing; undefined when missing and not made.
 */
export async function kindDirectory(dir: string, kind: string, create: boolean): Promise<string | undefined> {
  const path = join(dir, kind);
  let stats: Stats;
  try {
    stats = await lstat(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || !create) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    await mkdir(dir, { recursive: true });
    await mkdir(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
    stats = await lstat(path);
  }
  if (stats.isSymbolicLink()) throw linkRefusal(`${kind}/`);
  if (!stats.isDirectory()) throw new EntryFileError(`${kind}/`, undefined, 'is not a directory');
  return path;
}

/**
 * A file's text, read with a bound: opened without following a link, its size taken from the open file
 * before reading, never more than `limit` bytes read. Undefined when the file is missing.
 */
export async function readBounded(path: string, file: string, limit: number): Promise<string | undefined> {
  let handle;
  try {
    // O_NONBLOCK: a FIFO in the folder must not hang the open.
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP') throw linkRefusal(file);
    throw err;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new EntryFileError(file, undefined, 'is not a regular file');
    const tooLarge = (size: string) =>
      new EntryFileError(file, undefined, `is ${size}, more than the ${limit} bytes a registry file may hold`);
    if (stats.size > limit) throw tooLarge(`${stats.size} bytes`);
    const buffer = Buffer.alloc(limit + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > limit) throw tooLarge('larger now');
    }
    return buffer.subarray(0, length).toString('utf8');
  } finally {
    await handle.close();
  }
}

/**
 * Writes `text` to `path` whole or not at all: a new temporary file beside it (O_EXCL, so never through a
 * link), then a rename, which replaces the name itself and never follows a link there.
 */
export async function writeAtomic(path: string, text: string): Promise<void> {
  const temp = join(path, '..', `.${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}.tmp`);
  try {
    const handle = await open(temp, 'wx', 0o644);
    try {
      await handle.writeFile(text);
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
}

/** Writes an entry's file inside its kind's directory (made when missing, refused when a link). */
export async function writeEntryText(dir: string, kind: string, name: string, text: string): Promise<void> {
  const path = entryPath(dir, kind, name);
  await kindDirectory(dir, kind, true);
  await writeAtomic(path, text);
}

/** Removes an entry's file (a link there is removed itself, never what it leads to). */
export async function removeEntryFile(dir: string, kind: string, name: string): Promise<void> {
  const path = entryPath(dir, kind, name);
  if (!(await kindDirectory(dir, kind, false))) return;
  await unlink(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
}
