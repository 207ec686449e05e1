import { createHash } from 'node:crypto';
import { mkdir, opendir } from 'node:fs/promises';
import { join } from 'node:path';
import YAML from 'yaml';
import { REGISTRY_KINDS, type RegistryKind } from '@cleveragents/contract';
import {
  EntryFileError,
  entryPath,
  keyProblem,
  kindDirectory,
  MAX_ENTRY_FILE_BYTES,
  MAX_ENTRY_FILES,
  MAX_STATE_FILE_BYTES,
  quoted,
  readBounded,
  removeEntryFile,
  writeAtomic,
  writeEntryText,
} from './paths.js';

export { EntryFileError, writeAtomic };

/**
 * A registry folder: one YAML file per entry (`<kind>/<name>.yaml`, holding its `spec` and `labels`)
 * and a state file with the server, namespace, cursor and each entry's base revision and content hash.
 * Every write is a temporary file renamed into place, so a file is always whole; every path is checked
 * by ./paths.ts (the grammar of names, no symbolic links).
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

/**
 * The folder's state, or undefined when it has none. A cloned repository can carry one, so every key is
 * checked as a name from the server would be: a key becomes a path when its entry is taken or removed.
 */
export async function readState(dir: string): Promise<FolderState | undefined> {
  const text = await readBounded(join(dir, STATE_FILE), STATE_FILE, MAX_STATE_FILE_BYTES);
  if (text === undefined) return undefined;
  const wrong = (problem: string) =>
    new EntryFileError(STATE_FILE, undefined, `is not a registry folder state this client reads: ${problem}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw wrong('not JSON');
  }
  const state = (isMapping(parsed) ? parsed : {}) as Partial<Record<keyof FolderState, unknown>>;
  if (state.version !== STATE_VERSION) throw wrong('version');
  if (typeof state.namespace !== 'string' || typeof state.server !== 'string') throw wrong('namespace or server');
  if (!Number.isSafeInteger(state.cursor) || (state.cursor as number) < 0) throw wrong('cursor');
  if (!isMapping(state.entries)) throw wrong('entries');
  for (const [key, base] of Object.entries(state.entries)) {
    const [kind, name, ...rest] = key.split('/');
    const bad = rest.length > 0 ? { field: 'name', problem: 'has a "/"' } : keyProblem(kind, name);
    if (bad) throw wrong(`entries ${quoted(key)}: ${bad.field} ${bad.problem}`);
    if (!isMapping(base) || !Number.isSafeInteger(base.revision)) throw wrong(`entries ${quoted(key)}: revision`);
  }
  return parsed as FolderState;
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export async function writeState(dir: string, state: FolderState): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeAtomic(join(dir, STATE_FILE), `${JSON.stringify(state, null, 2)}\n`);
}

export function newState(server: string, namespace: string): FolderState {
  return { version: STATE_VERSION, server, namespace, cursor: 0, entries: {} };
}

/** What a file of the folder holds now: its content, or why it cannot be read; undefined when absent. */
export type FileReading = { content: EntryContent; hash: string } | { error: EntryFileError } | undefined;

/**
 * An entry file's text, read with a bound (MAX_ENTRY_FILE_BYTES) and never through a link; undefined when
 * missing. A file whose name is not a registry name is refused naming it.
 */
export async function readEntryText(dir: string, key: EntryKey): Promise<string | undefined> {
  const file = fileOf(key);
  const bad = keyProblem(key.kind, key.name);
  if (bad) throw new EntryFileError(file, bad.field, bad.problem);
  if (!(await kindDirectory(dir, key.kind, false))) return undefined;
  return readBounded(entryPath(dir, key.kind, key.name), file, MAX_ENTRY_FILE_BYTES);
}

export async function readEntryFile(dir: string, key: EntryKey): Promise<FileReading> {
  try {
    const text = await readEntryText(dir, key);
    if (text === undefined) return undefined;
    const content = parseEntryYaml(text, fileOf(key));
    return { content, hash: contentHash(content) };
  } catch (err) {
    if (err instanceof EntryFileError) return { error: err };
    throw err;
  }
}

/**
 * The entry files of the folder (`<kind>/<name>.yaml` for each kind), by key; refused before any is read
 * when there are more than MAX_ENTRY_FILES, or a kind's directory is a link.
 */
export async function entryFiles(dir: string): Promise<EntryKey[]> {
  const found: EntryKey[] = [];
  for (const kind of REGISTRY_KINDS) {
    const path = await kindDirectory(dir, kind, false);
    if (!path) continue;
    // Counted while listed, so that a directory of millions of names is refused without holding them all.
    for await (const { name: file } of await opendir(path)) {
      if (!file.endsWith('.yaml') || file.startsWith('.')) continue;
      found.push({ kind, name: file.slice(0, -'.yaml'.length) });
      if (found.length > MAX_ENTRY_FILES) {
        throw new EntryFileError(
          `${kind}/`,
          undefined,
          `the folder holds more than ${MAX_ENTRY_FILES} entry files, the most a registry folder may hold`,
        );
      }
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
  await writeEntryText(dir, key.kind, key.name, entryYaml(content));
  state.entries[keyOf(key)] = { revision, hash: contentHash(content) };
}

/** Removes an entry's file and its base. */
export async function forgetEntry(dir: string, state: FolderState, key: EntryKey): Promise<void> {
  await removeEntryFile(dir, key.kind, key.name);
  delete state.entries[keyOf(key)];
}
