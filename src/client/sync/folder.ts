import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import YAML from 'yaml';
import { REGISTRY_KINDS, type RegistryKind } from '../../contract/index.js';

/**
 * A registry folder: one YAML file per entry (`<kind>/<name>.yaml`, holding its `spec` and `labels`)
 * and a state file with the server, namespace, cursor and each entry's base revision and content hash.
 * Every write is a temporary file renamed into place, so a file is always whole.
 */

export const STATE_FILE = '.cleveragents-sync.json';
const STATE_VERSION = 1;

/** What the folder knows of an entry as last pulled or pushed. */
export interface BaseEntry {
  revision: number;
  /** The hash of the entry's content (spec and labels) as pulled or pushed. */
  hash: string;
}

export interface FolderState {
  version: number;
  server: string;
  namespace: string;
  cursor: number;
  /** By `<kind>/<name>`. */
  entries: Record<string, BaseEntry>;
}

/** An entry's content as a file holds it. */
export interface EntryContent {
  spec: Record<string, unknown>;
  labels: Record<string, string>;
}

export interface EntryKey {
  kind: RegistryKind;
  name: string;
}

export type LocalState = 'added' | 'modified' | 'deleted';

/** A difference between the folder and its base revisions. */
export interface LocalChange extends EntryKey {
  state: LocalState;
  /** Relative to the folder: `tool/read_file.yaml`. */
  file: string;
  /** 0 for an added entry. */
  baseRevision: number;
}

export function keyOf(entry: EntryKey): string {
  return `${entry.kind}/${entry.name}`;
}

export function fileOf(entry: EntryKey): string {
  return `${entry.kind}/${entry.name}.yaml`;
}

export function parseKey(key: string): EntryKey {
  const [kind, name] = key.split('/') as [RegistryKind, string];
  return { kind, name };
}

/** The JSON of a value with object keys sorted, so that equal content hashes equally. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export function contentHash(content: EntryContent): string {
  return createHash('sha256')
    .update(canonical({ spec: content.spec, labels: content.labels }))
    .digest('hex');
}

/** The file an entry is written as. */
export function entryYaml(content: EntryContent): string {
  return YAML.stringify({ spec: content.spec, labels: content.labels }, { aliasDuplicateObjects: false });
}

/** A file that cannot be read as an entry: the problem, with the field when there is one. */
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

/**
 * An entry file's content. Only its shape is checked here (a mapping with `spec` and `labels`);
 * what a spec holds is checked against the server's published contract before a push.
 */
export function parseEntryYaml(text: string, file: string): EntryContent {
  const doc = YAML.parseDocument(text, { prettyErrors: true });
  if (doc.errors.length > 0) {
    throw new EntryFileError(file, undefined, `not valid YAML: ${doc.errors[0].message.split('\n')[0]}`);
  }
  const parsed = doc.toJS() as unknown;
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new EntryFileError(file, undefined, 'must be a mapping with spec (and labels)');
  }
  const { spec, labels, ...rest } = parsed as Record<string, unknown>;
  const extra = Object.keys(rest).at(0);
  if (extra !== undefined) throw new EntryFileError(file, extra, 'is not a field of an entry file (spec, labels)');
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) {
    throw new EntryFileError(file, 'spec', 'must be a mapping: the definition of the entry');
  }
  if (labels !== undefined && (labels === null || typeof labels !== 'object' || Array.isArray(labels))) {
    throw new EntryFileError(file, 'labels', 'must be a mapping of label names to values');
  }
  return { spec: spec as Record<string, unknown>, labels: (labels ?? {}) as Record<string, string> };
}

/** Does the file state its labels? One that leaves them out is written in full once pushed. */
export function statesLabels(text: string): boolean {
  const parsed = YAML.parse(text) as Record<string, unknown> | null;
  return parsed !== null && typeof parsed === 'object' && 'labels' in parsed;
}

/** Writes `text` to `path` whole or not at all: a temporary file beside it, then a rename. */
export async function writeAtomic(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temp = join(dirname(path), `.${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}.tmp`);
  try {
    await writeFile(temp, text, { mode: 0o644 });
    await rename(temp, path);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
}

export async function readState(dir: string): Promise<FolderState | undefined> {
  let text: string;
  try {
    text = await readFile(join(dir, STATE_FILE), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const state = JSON.parse(text) as FolderState;
  if (state.version !== STATE_VERSION || typeof state.namespace !== 'string' || typeof state.cursor !== 'number') {
    throw new Error(`${join(dir, STATE_FILE)} is not a registry folder state this client reads`);
  }
  return state;
}

export async function writeState(dir: string, state: FolderState): Promise<void> {
  await writeAtomic(join(dir, STATE_FILE), `${JSON.stringify(state, null, 2)}\n`);
}

export function newState(server: string, namespace: string): FolderState {
  return { version: STATE_VERSION, server, namespace, cursor: 0, entries: {} };
}

/** What a file of the folder holds now: its content, or why it cannot be read; undefined when absent. */
export type FileReading = { content: EntryContent; hash: string } | { error: EntryFileError } | undefined;

export async function readEntryFile(dir: string, key: EntryKey): Promise<FileReading> {
  const file = fileOf(key);
  let text: string;
  try {
    text = await readFile(join(dir, file), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const content = parseEntryYaml(text, file);
    return { content, hash: contentHash(content) };
  } catch (err) {
    if (err instanceof EntryFileError) return { error: err };
    throw err;
  }
}

/** The entry files of the folder (`<kind>/<name>.yaml` for each kind), by key. */
export async function entryFiles(dir: string): Promise<EntryKey[]> {
  const found: EntryKey[] = [];
  for (const kind of REGISTRY_KINDS) {
    let names: string[];
    try {
      names = await readdir(join(dir, kind));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw err;
    }
    for (const file of names) {
      if (file.endsWith('.yaml') && !file.startsWith('.')) found.push({ kind, name: file.slice(0, -'.yaml'.length) });
    }
  }
  return found;
}

/**
 * The folder's changes against its base revisions, by content: a file reformatted or re-commented
 * is not modified; one that no longer parses is.
 */
export async function localChanges(dir: string, state: FolderState): Promise<LocalChange[]> {
  const changes: LocalChange[] = [];
  const onDisk = new Set((await entryFiles(dir)).map(keyOf));
  for (const [key, base] of Object.entries(state.entries)) {
    const entry = parseKey(key);
    if (!onDisk.has(key)) {
      changes.push({ ...entry, state: 'deleted', file: fileOf(entry), baseRevision: base.revision });
      continue;
    }
    const reading = await readEntryFile(dir, entry);
    if (reading && 'hash' in reading && reading.hash === base.hash) continue;
    changes.push({ ...entry, state: 'modified', file: fileOf(entry), baseRevision: base.revision });
  }
  for (const key of onDisk) {
    if (Object.hasOwn(state.entries, key)) continue;
    const entry = parseKey(key);
    changes.push({ ...entry, state: 'added', file: fileOf(entry), baseRevision: 0 });
  }
  return changes.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
}

/** Writes an entry's file and records it as the base at `revision`. */
export async function storeEntry(
  dir: string,
  state: FolderState,
  key: EntryKey,
  content: EntryContent,
  revision: number,
): Promise<void> {
  await writeAtomic(join(dir, fileOf(key)), entryYaml(content));
  state.entries[keyOf(key)] = { revision, hash: contentHash(content) };
}

/** Removes an entry's file and its base. */
export async function forgetEntry(dir: string, state: FolderState, key: EntryKey): Promise<void> {
  await rm(join(dir, fileOf(key)), { force: true });
  delete state.entries[keyOf(key)];
}
