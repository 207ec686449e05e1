import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import type { PullResult, RegistryKind, SyncChange } from '@cleveragents/contract';
import { newState, readState, type FolderState } from './folder.js';
import { pullInto } from './pull.js';

/*
 * pullInto on a real folder, fed from a change log held here (the server's part, proven against the
 * real server by test/client/cli-registry.e2e-spec.ts): paging, resuming, and what is never written over.
 */

let seq = 0;
function upsert(kind: RegistryKind, name: string, revision: number, spec: Record<string, unknown>): SyncChange {
  seq += 1;
  const at = '2026-12-01T00:00:00.000Z';
  return {
    seq,
    kind,
    name,
    op: 'upsert',
    revision,
    entity: {
      ...{ id: `id-${seq}`, namespace: 'acme', kind, name, spec, labels: {}, revision, builtin: false },
      ...{ createdAt: at, createdBy: 'x', updatedAt: at, updatedBy: 'x' },
    },
  };
}
function remove(kind: RegistryKind, name: string, revision: number): SyncChange {
  seq += 1;
  return { seq, kind, name, op: 'delete', revision };
}

/** Pages of `size` from `log`, as sync/pull answers; `failAt` makes the pull from that cursor fail. */
function pagesOf(log: SyncChange[], size: number, failAt?: number) {
  const cursors: number[] = [];
  const page = (cursor: number): Promise<PullResult> => {
    cursors.push(cursor);
    if (cursor === failAt) return Promise.reject(new Error('connection lost'));
    const after = log.filter((c) => c.seq > cursor);
    const changes = after.slice(0, size);
    return Promise.resolve({ changes, cursor: changes.at(-1)?.seq ?? cursor, hasMore: after.length > size });
  };
  return { page, cursors };
}

describe('pullInto', () => {
  let dir: string;
  let state: FolderState;

  beforeEach(async () => {
    seq = 0;
    dir = await mkdtemp(join(tmpdir(), 'cleveragents-pull-'));
    state = newState('http://server', 'acme');
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const fileOf = async (key: string): Promise<unknown> => YAML.parse(await readFile(join(dir, `${key}.yaml`), 'utf8'));

  it('pages through the log; a pull that fails on a later page writes nothing, and the next one takes it all', async () => {
    const log = [
      upsert('tool', 'a', 1, { description: 'A' }),
      upsert('tool', 'b', 1, { description: 'B' }),
      upsert('tool', 'a', 2, { description: 'A2' }),
      upsert('skill', 's', 1, { description: 'S' }),
      remove('tool', 'b', 2),
    ];
    const failing = pagesOf(log, 2, 2);
    await expect(pullInto(dir, state, failing.page)).rejects.toThrow('connection lost');
    expect(failing.cursors).toEqual([0, 2]);
    // The first page was checked but not applied: the folder is as it was.
    expect(await readState(dir)).toBeUndefined();
    expect(existsSync(join(dir, 'tool'))).toBe(false);

    const again = pagesOf(log, 2);
    const outcome = await pullInto(dir, state, again.page);
    expect(again.cursors).toEqual([0, 2, 4]);
    // Each entry once, where it last changed; one made and deleted within the pull never shows.
    expect(outcome.entries.map((e) => [e.file, e.action, e.revision])).toEqual([
      ['tool/a.yaml', 'added', 2],
      ['skill/s.yaml', 'added', 1],
    ]);
    expect(await fileOf('tool/a')).toEqual({ spec: { description: 'A2' }, labels: {} });
    expect(existsSync(join(dir, 'tool/b.yaml'))).toBe(false);
    expect(await readState(dir)).toEqual({
      ...state,
      cursor: 5,
      entries: {
        'tool/a': expect.objectContaining({ revision: 2 }),
        'skill/s': expect.objectContaining({ revision: 1 }),
      },
    });
  });

  it('never writes over or removes a local change; a server change equal to it is simply taken', async () => {
    await pullInto(
      dir,
      state,
      pagesOf(
        [upsert('tool', 'kept', 1, { d: 1 }), upsert('tool', 'same', 1, { d: 1 }), upsert('tool', 'gone', 1, { d: 1 })],
        10,
      ).page,
    );
    await writeFile(join(dir, 'tool/kept.yaml'), 'spec:\n  d: mine\n');
    await writeFile(join(dir, 'tool/same.yaml'), 'spec:\n  d: 2\n');
    await writeFile(join(dir, 'tool/gone.yaml'), 'spec:\n  d: mine too\n');
    await writeFile(join(dir, 'tool/new.yaml'), 'spec:\n  d: new\n');
    const log = [
      upsert('tool', 'kept', 2, { d: 'theirs' }),
      upsert('tool', 'same', 2, { d: 2 }),
      remove('tool', 'gone', 2),
      upsert('tool', 'new', 1, { d: 'theirs' }),
    ];
    const outcome = await pullInto(dir, state, pagesOf(log, 10).page);
    expect(outcome.entries.map((e) => [e.file, e.action, e.local, e.server])).toEqual([
      ['tool/kept.yaml', 'conflict', 'modified', 'upsert'],
      ['tool/same.yaml', 'updated', undefined, undefined],
      ['tool/gone.yaml', 'conflict', 'modified', 'delete'],
      ['tool/new.yaml', 'conflict', 'added', 'upsert'],
    ]);
    expect(await fileOf('tool/kept')).toEqual({ spec: { d: 'mine' } });
    expect(await fileOf('tool/gone')).toEqual({ spec: { d: 'mine too' } });
    expect(await fileOf('tool/new')).toEqual({ spec: { d: 'new' } });
    // Conflicting entries keep their bases, so a push meets the conflict; the converged one moved on.
    expect(state.entries['tool/kept'].revision).toBe(1);
    expect(state.entries['tool/gone'].revision).toBe(1);
    expect(state.entries['tool/new']).toBeUndefined();
    expect(state.entries['tool/same'].revision).toBe(2);
    expect(state.cursor).toBe(7);
  });

  it('a name deleted and made again in one pull is updated; one made and deleted in it never shows', async () => {
    await pullInto(dir, state, pagesOf([upsert('skill', 'x', 1, { v: 1 })], 10).page);
    const log = [
      remove('skill', 'x', 2),
      upsert('tool', 'brief', 1, {}),
      upsert('skill', 'x', 3, { v: 3 }),
      remove('tool', 'brief', 2),
    ];
    const outcome = await pullInto(dir, state, pagesOf(log, 1).page);
    expect(outcome.entries.map((e) => [e.file, e.action, e.revision])).toEqual([['skill/x.yaml', 'updated', 3]]);
    expect(await fileOf('skill/x')).toEqual({ spec: { v: 3 }, labels: {} });
    expect(existsSync(join(dir, 'tool/brief.yaml'))).toBe(false);
    expect(Object.keys(state.entries)).toEqual(['skill/x']);
  });

  it('a change naming a path, anywhere in the pull, stops it whole before the first write', async () => {
    await pullInto(dir, state, pagesOf([upsert('tool', 'kept', 1, { d: 1 })], 10).page);
    const before = await readFile(join(dir, '.cleveragents-sync.json'), 'utf8');
    const log = [upsert('tool', 'fine', 1, {}), upsert('tool', '../../escaped', 1, {}), remove('tool', 'kept', 2)];
    await expect(pullInto(dir, state, pagesOf(log, 1).page)).rejects.toThrow(
      /change "3" is refused: name "..\/..\/escaped" must be a registry name/,
    );
    expect(existsSync(join(dir, 'tool/fine.yaml'))).toBe(false);
    expect(existsSync(join(dir, '../escaped.yaml'))).toBe(false);
    expect(await readFile(join(dir, '.cleveragents-sync.json'), 'utf8')).toBe(before);
  });
});
