import { resolve, sep } from 'node:path';
import type { Command } from 'commander';
import type { AppliedChange, PushChange, PushResult, SyncChange } from '@cleveragents/contract';
import { CleverAgentsError, type CleverAgentsClient } from '@cleveragents/client/node';
import {
  forgetEntry,
  keyOf,
  localChanges,
  newState,
  parseEntryYaml,
  readEntryFile,
  readEntryText,
  readState,
  statesLabels,
  storeEntry,
  writeState,
  contentHash,
  EntryFileError,
  type EntryContent,
  type FolderState,
  type LocalChange,
} from '../sync/folder.js';
import { writeEntryText } from '../sync/paths.js';
import { contentOf, fetchChanges, pullInto, type PulledEntry } from '../sync/pull.js';
import { changeFieldOf, changeValidator, checkPushAnswer, pushLimit } from '../sync/validate.js';
import {
  askResolution,
  conflictView,
  describeConflict,
  editConflict,
  type ConflictView,
  type Resolution,
} from '../conflicts.js';
import { cliCommand, connectOptionsOf, ioFor, withClient, type GlobalOptions, type Io } from '../context.js';
import { currentServer, readCredentials } from '../credentials.js';
import { CliError, EXIT } from '../exit-codes.js';
import { askYesNo } from '../prompts.js';
import { safeLine, visibleText } from '../safe-text.js';
import { table } from '../table.js';

/**
 * `cleveragents registry pull|status|push`: a namespace's registry as a folder of YAML files, edited
 * offline and synchronised with `_cleveragents/sync/*` (docs/client.md "Registry folder").
 */

/** The state's `server` for a folder pulled in local mode. */
const LOCAL_SERVER = 'local';
/** Resolution rounds of one push at most (each re-pushes what the user chose to keep or edited). */
const MAX_ROUNDS = 20;

interface FolderOptions {
  dir?: string;
  namespace?: string;
  remote?: boolean;
  atomic?: boolean;
  resolve?: 'mine' | 'theirs';
}

function dirOf(command: Command): string {
  return resolve(command.opts<FolderOptions>().dir ?? '.');
}

/** A folder in the way (a link, too many files, a state it cannot read): a usage error naming it. */
async function inFolder<T>(dir: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    // Joined as text: the message may quote a name with `..` in it, which path.join would fold away.
    if (err instanceof EntryFileError) throw new CliError(`${dir}${sep}${err.message}`, EXIT.USAGE);
    throw err;
  }
}

async function requireState(dir: string): Promise<FolderState> {
  const state = await inFolder(dir, () => readState(dir));
  if (!state) {
    throw new CliError(
      `${dir} is not a registry folder`,
      EXIT.USAGE,
      'run `cleveragents registry pull --dir DIR` first',
    );
  }
  return state;
}

/**
 * The server a folder's command goes to: the user's when they name one (--server, --local, --context,
 * CLEVERAGENTS_SERVER); else the folder's. A folder names any server it likes (a cloned repository carries
 * its state), and the user's credentials go where the command connects: a server other than the one the
 * user logged into is taken only once the person says yes in a terminal, and refused elsewhere.
 */
async function optionsFor(
  options: GlobalOptions,
  state: FolderState | undefined,
  dir: string,
  io: Io,
): Promise<GlobalOptions> {
  if (!state || options.server || options.local || options.context || io.env.CLEVERAGENTS_SERVER) return options;
  // No credential leaves the machine: the local server is the user's own.
  if (state.server === LOCAL_SERVER) return { ...options, local: true };
  const mine = currentServer(await readCredentials(io.env));
  if (mine && sameServer(mine, state.server)) return { ...options, server: state.server };
  const theirs = visibleText(state.server);
  const yours = mine
    ? `your server is ${visibleText(mine)}`
    : 'you named no server (--server, CLEVERAGENTS_SERVER, login)';
  if (process.stdin.isTTY === true && io.err.isTTY === true) {
    io.err.write(`${io.errStyle.yellow('This folder names the server')} ${theirs}; ${yours}.\n`);
    const yes = await askYesNo(`Connect to ${theirs} and send it your credentials?`, io);
    if (yes) return { ...options, server: state.server };
    throw new CliError(
      `Not connecting to ${theirs}, the server ${dir} names`,
      EXIT.USAGE,
      'pass --server URL to choose one',
    );
  }
  throw new CliError(
    `${dir} names the server ${theirs}; ${yours}. Your credentials go only to a server you name`,
    EXIT.USAGE,
    `if you trust it, pass --server ${theirs}`,
  );
}

function sameServer(a: string, b: string): boolean {
  return a.replace(/\/+$/, '') === b.replace(/\/+$/, '');
}

function rethrowCursorAhead(err: unknown): never {
  if (err instanceof CleverAgentsError && err.reason === 'CURSOR_AHEAD') {
    throw new CliError(
      'The server no longer has the history this folder was pulled from (the namespace was made again)',
      EXIT.FAILED,
      'move the folder away, pull into a new one, and copy your edits over',
    );
  }
  throw err;
}

export async function pull(options: GlobalOptions, command: Command): Promise<number> {
  const io = ioFor(options);
  const dir = dirOf(command);
  const wanted = command.opts<FolderOptions>().namespace;
  const existing = await inFolder(dir, () => readState(dir));
  if (existing && wanted && wanted !== existing.namespace) {
    throw new CliError(
      `${dir} holds namespace ${existing.namespace}, not ${wanted}`,
      EXIT.USAGE,
      'pull into another folder',
    );
  }
  const effective = await optionsFor(options, existing, dir, io);
  const target = await connectOptionsOf(effective, io.env);
  const server = target.server ?? LOCAL_SERVER;
  if (existing && !sameServer(existing.server, server)) {
    throw new CliError(
      `${dir} was pulled from ${existing.server}, not ${server}`,
      EXIT.USAGE,
      'pull into another folder',
    );
  }
  return withClient(effective, io, async (client) => {
    const namespace = existing?.namespace ?? (await client.sync.status(wanted ? { namespace: wanted } : {})).namespace;
    const state = existing ?? newState(server, namespace);
    const outcome = await inFolder(dir, () =>
      pullInto(dir, state, (cursor) =>
        client.sync.pull({ namespace, cursor, limit: 1000 }).catch(rethrowCursorAhead),
      ).catch(rethrowCursorAhead),
    );
    const conflicts = outcome.entries.filter((e) => e.action === 'conflict');
    if (options.json) {
      io.out.write(`${JSON.stringify({ namespace, dir, cursor: outcome.cursor, entries: outcome.entries })}\n`);
    } else {
      printPulled(io, outcome.entries);
      io.out.write(`${namespace} at change ${outcome.cursor} in ${dir}\n`);
      if (conflicts.length > 0) {
        const given = command.opts<FolderOptions>().dir;
        const push = cliCommand(['registry', 'push', ...(given === undefined ? [] : ['--dir', dir])], options);
        io.out.write(
          `${io.outStyle.yellow(`${conflicts.length} conflict(s):`)} your local changes were kept; \`${visibleText(push)}\` resolves them\n`,
        );
      }
    }
    return conflicts.length > 0 ? EXIT.CONFLICT : EXIT.OK;
  });
}

function printPulled(io: Io, entries: PulledEntry[]): void {
  if (entries.length === 0) {
    io.out.write('No changes.\n');
    return;
  }
  const style = io.outStyle;
  const rows = entries.map((e) => {
    const action =
      e.action === 'conflict'
        ? style.yellow(`conflict (${e.local} here, ${e.server === 'delete' ? 'deleted' : 'changed'} on the server)`)
        : e.action === 'deleted'
          ? style.red(e.action)
          : style.green(e.action);
    return [action, visibleText(e.kind), visibleText(e.name), String(e.revision), visibleText(e.file)];
  });
  io.out.write(`${table(['CHANGE', 'KIND', 'NAME', 'REVISION', 'FILE'], rows)}\n`);
}

export async function status(options: GlobalOptions, command: Command): Promise<number> {
  const io = ioFor(options);
  const dir = dirOf(command);
  const state = await requireState(dir);
  const changes = await inFolder(dir, () => localChanges(dir, state));
  const problems = await unreadable(dir, changes);
  const remote = command.opts<FolderOptions>().remote
    ? await withClient(await optionsFor(options, state, dir, io), io, (client) => newerOnServer(client, state, changes))
    : undefined;
  if (options.json) {
    io.out.write(
      `${JSON.stringify({ namespace: state.namespace, server: state.server, dir, cursor: state.cursor, changes, problems, ...(remote ? { remote } : {}) })}\n`,
    );
    return EXIT.OK;
  }
  const style = io.outStyle;
  if (changes.length === 0) io.out.write('No local changes.\n');
  else {
    const colour: Record<LocalChange['state'], (text: string) => string> = {
      added: (text) => style.green(text),
      modified: (text) => style.yellow(text),
      deleted: (text) => style.red(text),
    };
    const rows = changes.map((c) => [
      colour[c.state](c.state),
      visibleText(c.kind),
      visibleText(c.name),
      c.baseRevision ? String(c.baseRevision) : '—',
      visibleText(c.file),
    ]);
    io.out.write(`${table(['CHANGE', 'KIND', 'NAME', 'BASE', 'FILE'], rows)}\n`);
  }
  for (const p of problems) {
    // The folder may come from a cloned repository: its file names and what a parser quotes are not ours.
    io.out.write(
      `${style.red(`${visibleText(p.file)}:`)} ${safeLine(`${p.field ? `${p.field}: ` : ''}${p.description}`)}\n`,
    );
  }
  if (remote) {
    if (remote.newer.length === 0) io.out.write(`The server has nothing newer (change ${remote.latestSeq}).\n`);
    else {
      io.out.write(`The server has ${remote.newer.length} newer change(s) (up to change ${remote.latestSeq}):\n`);
      const rows = remote.newer.map((c) => [
        c.op === 'delete' ? style.red('deleted') : style.green('changed'),
        visibleText(c.kind),
        visibleText(c.name),
        String(c.revision),
        c.collides ? style.yellow('conflicts with your change') : '',
      ]);
      io.out.write(`${table(['CHANGE', 'KIND', 'NAME', 'REVISION', ''], rows)}\n`);
    }
  }
  return EXIT.OK;
}

/** Why the changed files that cannot be read as entries cannot (too large, a link, not YAML…). */
async function unreadable(dir: string, changes: LocalChange[]): Promise<FileViolation[]> {
  const problems: FileViolation[] = [];
  for (const change of changes) {
    if (change.state === 'deleted') continue;
    const reading = await readEntryFile(dir, change);
    if (reading && 'error' in reading) {
      problems.push({ file: change.file, field: reading.error.field ?? '', description: reading.error.problem });
    }
  }
  return problems;
}

interface NewerChange {
  kind: SyncChange['kind'];
  name: string;
  op: SyncChange['op'];
  revision: number;
  seq: number;
  collides: boolean;
}

/** What the server has after the folder's cursor, one line per entry (its last change); checked, never applied. */
async function newerOnServer(
  client: CleverAgentsClient,
  state: FolderState,
  changes: LocalChange[],
): Promise<{ latestSeq: number; newer: NewerChange[] }> {
  const { latestSeq } = await client.sync.status({ namespace: state.namespace });
  const local = new Set(changes.map(keyOf));
  const { last } = await fetchChanges(state, (cursor) =>
    client.sync.pull({ namespace: state.namespace, cursor, limit: 1000 }).catch(rethrowCursorAhead),
  );
  const newer = [...last.values()].map(({ kind, name, op, revision, seq }) => {
    const collides = local.has(keyOf({ kind, name }));
    return { kind, name, op, revision, seq, collides };
  });
  return { latestSeq, newer };
}

/** A local change ready to send, with the content it sends (to record once applied). */
interface Outgoing {
  local: LocalChange;
  change: PushChange;
  content: EntryContent | null;
  /** The file leaves out its labels: written in full once applied, so that it reads as the server's entry. */
  rewrite: boolean;
}

interface FileViolation {
  file: string;
  field: string;
  description: string;
}

class FolderInvalid extends CliError {
  constructor(readonly violations: FileViolation[]) {
    super(
      `${violations.length === 1 ? 'A file is' : `${violations.length} problems are`} in the way; nothing was sent:\n` +
        violations.map((v) => `  ${v.file}: ${v.field ? `${v.field}: ` : ''}${v.description}`).join('\n'),
      EXIT.USAGE,
      'fix the files and push again',
    );
  }
}

async function outgoing(dir: string, pending: LocalChange[], bases: Map<string, number>): Promise<Outgoing[]> {
  const out: Outgoing[] = [];
  const problems: FileViolation[] = [];
  for (const local of pending) {
    const baseRevision = bases.get(keyOf(local)) ?? local.baseRevision;
    if (local.state === 'deleted') {
      out.push({
        local,
        change: { kind: local.kind, name: local.name, op: 'delete', baseRevision },
        content: null,
        rewrite: false,
      });
      continue;
    }
    try {
      const text = await readEntryText(dir, local);
      if (text === undefined) throw new EntryFileError(local.file, undefined, 'is gone');
      const content = parseEntryYaml(text, local.file);
      out.push({
        local,
        change: {
          kind: local.kind,
          name: local.name,
          op: 'upsert',
          baseRevision,
          spec: content.spec,
          labels: content.labels,
        },
        content,
        rewrite: !statesLabels(text),
      });
    } catch (err) {
      if (!(err instanceof EntryFileError)) throw err;
      problems.push({ file: err.file, field: err.field ?? '', description: err.problem });
    }
  }
  if (problems.length > 0) throw new FolderInvalid(problems);
  return out;
}

/** The terminal's width, or 100 columns off a terminal. */
function widthOf(io: Io): number {
  return io.out.isTTY ? io.out.columns : 100;
}

/** The folder's cursor moves over the seqs this client wrote, as long as they follow it without a gap. */
function advanceCursor(state: FolderState, seqs: Set<number>): void {
  while (seqs.has(state.cursor + 1)) state.cursor += 1;
}

export async function push(options: GlobalOptions, command: Command): Promise<number> {
  const io = ioFor(options);
  const dir = dirOf(command);
  const flags = command.opts<FolderOptions>();
  const state = await requireState(dir);
  const effective = await optionsFor(options, state, dir, io);
  try {
    return await withClient(effective, io, (client) => pushFolder(client, dir, state, flags, options, io));
  } catch (err) {
    if (err instanceof FolderInvalid && options.json) {
      io.out.write(
        `${JSON.stringify({ error: { message: 'invalid files', violations: err.violations, exitCode: EXIT.USAGE } })}\n`,
      );
      io.err.write(`${err.message}\n`);
      return EXIT.USAGE;
    }
    throw err;
  }
}

/**
 * One `sync/push`, or several of at most `limit` changes each (their indexes those of `changes`); an atomic
 * push cannot be split.
 */
async function sendChanges(
  client: CleverAgentsClient,
  namespace: string,
  changes: PushChange[],
  atomic: boolean,
  limit: number,
): Promise<{ result: PushResult; failure?: { error: unknown; offset: number } }> {
  if (atomic && changes.length > limit) {
    throw new CliError(
      `--atomic takes at most ${limit} changes in one push; this folder has ${changes.length}`,
      EXIT.USAGE,
      'push without --atomic, or in parts',
    );
  }
  const result: PushResult = { applied: [], conflicts: [] };
  for (let start = 0; start < changes.length; start += limit) {
    let part: PushResult;
    try {
      part = await client.sync.push({ namespace, changes: changes.slice(start, start + limit), atomic });
    } catch (error) {
      // What earlier parts applied stands and is recorded before the refusal is shown.
      return { result, failure: { error, offset: start } };
    }
    result.applied.push(...part.applied.map((a) => ({ ...a, index: a.index + start })));
    result.conflicts.push(...part.conflicts.map((c) => ({ ...c, index: c.index + start })));
  }
  return { result };
}

/** A push the server refused: a -32602 naming `changes[i].field` is shown by file, as a local check would. */
function refusalOf(err: unknown, offset: number, batch: Outgoing[]): unknown {
  if (!(err instanceof CleverAgentsError) || err.code !== -32602) return err;
  const named = err.fieldViolations.flatMap((v) => {
    const at = changeFieldOf(v.field);
    const sent = at ? batch.at(at.index + offset) : undefined;
    return at && sent ? [{ file: sent.local.file, field: at.field, description: v.description }] : [];
  });
  return named.length > 0 ? new FolderInvalid(named) : err;
}

async function pushFolder(
  client: CleverAgentsClient,
  dir: string,
  state: FolderState,
  flags: FolderOptions,
  options: GlobalOptions,
  io: Io,
): Promise<number> {
  const interactive =
    !options.json && flags.resolve === undefined && process.stdin.isTTY === true && io.out.isTTY === true;
  const bundle = await client.methodSchemas();
  const validate = bundle ? changeValidator(bundle) : undefined;
  const limit = pushLimit(bundle);
  /** The base a change is pushed from once the user kept or edited theirs: the server's revision. */
  const bases = new Map<string, number>();
  const left = new Set<string>();
  const written = new Set<number>();
  const applied: (AppliedChange & { file: string })[] = [];
  const resolved: { file: string; kind: string; name: string; resolution: Resolution }[] = [];
  let unresolved: ConflictView[] = [];

  for (let round = 0; round < MAX_ROUNDS; round++) {
    const pending = (await inFolder(dir, () => localChanges(dir, state))).filter((c) => !left.has(keyOf(c)));
    if (pending.length === 0) break;
    const batch = await outgoing(dir, pending, bases);
    const changes = batch.map((o) => o.change);
    const violations = validate?.(changes) ?? [];
    if (violations.length > 0) {
      throw new FolderInvalid(
        violations.map((v) => ({ file: batch[v.index].local.file, field: v.field, description: v.description })),
      );
    }
    const { result, failure } = await sendChanges(client, state.namespace, changes, flags.atomic === true, limit);
    // Before anything of it is applied: the answer names the files written or removed below.
    checkPushAnswer(result, changes);
    for (const done of result.applied) {
      const sent = batch[done.index];
      if (sent.content && sent.rewrite) await storeEntry(dir, state, sent.local, sent.content, done.revision);
      else if (sent.content) {
        state.entries[keyOf(sent.local)] = { revision: done.revision, hash: contentHash(sent.content) };
      } else delete state.entries[keyOf(sent.local)];
      bases.delete(keyOf(sent.local));
      written.add(done.seq);
      applied.push({ ...done, file: sent.local.file });
    }
    advanceCursor(state, written);
    await writeState(dir, state);
    if (failure) throw refusalOf(failure.error, failure.offset, batch);

    const conflicts = result.conflicts.map((c) => conflictView(c, batch[c.index].local.file, batch[c.index].content));
    unresolved = conflicts;
    if (conflicts.length === 0 || (!interactive && flags.resolve === undefined)) break;
    for (const [i, view] of conflicts.entries()) {
      const conflict = result.conflicts[i];
      if (interactive) io.out.write(`${describeConflict(view, io.outStyle, widthOf(io))}\n`);
      const resolution = flags.resolve ?? (await askResolution(view, io));
      const key = keyOf(view);
      switch (resolution) {
        case 'theirs':
          if (conflict.entity) await storeEntry(dir, state, view, contentOf(conflict.entity), conflict.currentRevision);
          else await forgetEntry(dir, state, view);
          break;
        case 'mine':
          if (view.op === 'delete' && !conflict.entity) {
            // Deleted on both sides: nothing left to push.
            delete state.entries[key];
          } else {
            bases.set(key, conflict.entity ? conflict.currentRevision : 0);
          }
          break;
        case 'edit': {
          const text = await readEntryText(dir, view);
          await writeEntryText(dir, view.kind, view.name, editConflict(view, text, io));
          bases.set(key, conflict.entity ? conflict.currentRevision : 0);
          break;
        }
        case 'leave':
          left.add(key);
          break;
      }
      if (resolution !== 'leave') resolved.push({ file: view.file, kind: view.kind, name: view.name, resolution });
    }
    await writeState(dir, state);
    unresolved = conflicts.filter((view) => left.has(keyOf(view)));
    // All or nothing: what is left stops the rest too.
    if (flags.atomic && unresolved.length > 0) break;
  }

  if (options.json) {
    io.out.write(
      `${JSON.stringify({ namespace: state.namespace, cursor: state.cursor, applied, resolved, conflicts: unresolved })}\n`,
    );
  } else {
    const style = io.outStyle;
    if (applied.length === 0 && resolved.length === 0 && unresolved.length === 0) io.out.write('Nothing to push.\n');
    if (applied.length > 0) {
      const rows = applied.map((a) => [
        a.op === 'delete' ? style.red('deleted') : style.green('pushed'),
        visibleText(a.kind),
        visibleText(a.name),
        String(a.revision),
        visibleText(a.file),
      ]);
      io.out.write(`${table(['CHANGE', 'KIND', 'NAME', 'REVISION', 'FILE'], rows)}\n`);
    }
    for (const r of resolved) io.out.write(`${style.dim(`${visibleText(r.file)}: resolved (${r.resolution})`)}\n`);
    if (!interactive) {
      for (const view of unresolved) io.out.write(`${describeConflict(view, style, widthOf(io))}\n`);
    }
    if (unresolved.length > 0) {
      io.out.write(
        `${style.yellow(`${unresolved.length} conflict(s) left`)}${flags.atomic && applied.length === 0 ? ' (atomic: nothing was applied)' : ''}; ` +
          'push again in a terminal to resolve them, or with --resolve mine|theirs\n',
      );
    }
  }
  return unresolved.length > 0 ? EXIT.CONFLICT : EXIT.OK;
}
