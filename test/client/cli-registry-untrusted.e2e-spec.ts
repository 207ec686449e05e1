import { existsSync } from 'node:fs';
import { lstat, mkdir, readFile, readdir, readlink, symlink, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { EXIT } from '../../packages/cli/src/exit-codes.js';
import { ifAssigned } from '../support/assigned.js';
import { cliHome, expectExit, runCli, terminalEnv, type CliHome } from '../support/cli.js';
import { startRogueSyncServer, type RogueSyncServer } from '../support/rogue-sync-server.js';
import { assertCliBuilt, CLI_BIN, KEYS, TerminalSession } from '../support/terminal.js';

/*
 * `cleveragents registry` against what it must not trust: a server answering sync/pull with names that
 * are paths, a folder (as a cloned repository carries it) naming another server or holding links, a
 * file too large to read. The CLI runs as a real process against a real HTTP server that records every
 * request and its credential headers.
 */

type Json = Record<string, any>;

const STATE = '.cleveragents-sync.json';
const KEY = 'ca_test_secret-key';

/** Every file and link under `dir`, with its content (or its target), by path. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const found: Record<string, string> = {};
  for (const name of await readdir(dir, { recursive: true })) {
    const path = join(dir, name);
    const stats = await lstat(path);
    if (stats.isSymbolicLink()) found[name] = `-> ${await readlink(path)}`;
    else if (stats.isFile()) found[name] = await readFile(path, 'utf8');
    else found[name] = '(directory)';
  }
  return found;
}

/** An entry as a real server sends it (every field of the contract's), but for what a case makes hostile. */
function entityOf(kind: string, name: string, spec: Json, revision: number, seq = revision): Json {
  const at = '2030-01-31T00:00:00.000Z';
  const by = 'apikey:01J0000000000000000000000';
  return {
    ...{ id: `01J00000000000000000000${String(seq).padStart(3, '0')}`, namespace: 'acme', kind, name, spec },
    ...{ labels: {}, revision, builtin: false, createdAt: at, createdBy: by, updatedAt: at, updatedBy: by },
  };
}

function upsert(seq: number, kind: string, name: string, spec: Json = { description: 'x' }): Json {
  return { ...{ seq, kind, name, op: 'upsert', revision: 1 }, entity: entityOf(kind, name, spec, 1, seq) };
}

function tombstone(seq: number, kind: string, name: string): Json {
  return { seq, kind, name, op: 'delete', revision: 2 };
}

describe('cleveragents registry: what the server sends and what the folder holds are not trusted', () => {
  let home: CliHome;
  let rogue: RogueSyncServer;
  /** The parent of the folder: what lies outside it. */
  let root: string;
  let dir: string;
  let run = 0;

  beforeAll(async () => {
    assertCliBuilt();
    home = await cliHome();
    rogue = await startRogueSyncServer();
  });

  afterAll(async () => {
    await ifAssigned(rogue)?.close();
    await ifAssigned(home)?.cleanup();
  });

  /** A fresh folder pulled from the rogue server (one entry, tool/kept), with a victim file beside it. */
  beforeEach(async () => {
    run += 1;
    root = join(home.dir, `case-${run}`);
    dir = join(root, 'registry');
    await mkdir(join(root, 'outside'), { recursive: true });
    await writeFile(join(root, 'victim.yaml'), 'precious: true\n');
    await writeFile(join(root, 'outside', 'secret.yaml'), 'spec:\n  description: a secret of the user\n');
    rogue.pages = (cursor) => ({ changes: cursor === 0 ? [upsert(1, 'tool', 'kept')] : [], cursor: 1, hasMore: false });
    rogue.pushes = () => ({ applied: [], conflicts: [] });
    expectExit(await cli(['--server', rogue.url, 'registry', 'pull', '--dir', dir]), EXIT.OK);
    rogue.received.length = 0;
  });

  const cli = (args: string[], env: Record<string, string> = {}) =>
    runCli(args, { home, env: { CLEVERAGENTS_API_KEY: KEY, ...env }, timeoutMs: 60000 });

  describe('pull: names and kinds that are paths are refused whole, nothing written or removed', () => {
    const hostile: [string, Json[]][] = [
      ['a name climbing out', [upsert(2, 'tool', '../../escaped')]],
      ['a kind climbing out', [upsert(2, '../..', 'escaped')]],
      ['an absolute name', [upsert(2, 'tool', '/tmp/escaped')]],
      ['a name through a folder', [upsert(2, 'tool', 'a/../../../escaped')]],
      ['a name with NUL', [upsert(2, 'tool', 'esc\u0000aped')]],
      ['a name with backslashes', [upsert(2, 'tool', '..\\..\\escaped')]],
      ['the name ..', [upsert(2, 'tool', '..')]],
      ['an unknown kind', [upsert(2, 'secrets', 'escaped')]],
      ['a tombstone for a file outside', [tombstone(2, 'tool', '../../victim')]],
      ['a tombstone for the kept file by another path', [tombstone(2, 'skill', '../tool/kept')]],
      ['a good change before a bad one', [upsert(2, 'tool', 'fine'), upsert(3, 'tool', '../../escaped')]],
      ['a bad change on a later page', [upsert(2, 'tool', 'fine'), upsert(3, 'tool', '../../../escaped')]],
    ];

    it.each(hostile)('%s', async (_what, changes) => {
      const paged = _what.includes('later page');
      rogue.pages = (cursor) =>
        paged
          ? { changes: changes.filter((c) => c.seq === cursor + 1), cursor: cursor + 1, hasMore: cursor + 1 < 3 }
          : { changes, cursor: changes.at(-1)!.seq, hasMore: false };
      const before = await snapshot(root);
      const pulled = await cli(['--server', rogue.url, 'registry', 'pull', '--dir', dir]);
      expectExit(pulled, EXIT.FAILED);
      if (_what.includes('kind')) {
        // Not a kind of the contract: the client refuses the whole result before the folder code sees it.
        expect(pulled.stderr).toMatch(
          /result does not follow the contract \(result\.changes\[\d\]\.kind: .*\); it was not used/,
        );
      } else {
        expect(pulled.stderr).toMatch(/The server's change "\d" is refused: name ".*" must be/);
        expect(pulled.stderr).toContain('nothing was written');
      }
      expect(await snapshot(root)).toEqual(before);
      expect(JSON.parse(await readFile(join(dir, STATE), 'utf8')).cursor).toBe(1);
    });

    it('status --remote: a change it only shows is checked the same, and no escape reaches the screen', async () => {
      rogue.pages = () => ({ changes: [upsert(2, 'tool', 'x\u001b]52;c;aGk=\u0007')], cursor: 2, hasMore: false });
      const shownRun = await cli(['--server', rogue.url, 'registry', 'status', '--remote', '--dir', dir]);
      expectExit(shownRun, EXIT.FAILED);
      expect(shownRun.stderr).toContain('name "x\\u{1b}]52;c;aGk=\\u{7}" must be a registry name');
      expect(shownRun.stdout + shownRun.stderr).not.toContain('\u001b]52');
    });

    it('a page that says more is waiting but does not move on is refused, not asked forever', async () => {
      rogue.pages = (cursor) => ({ changes: [], cursor, hasMore: true });
      const before = await snapshot(root);
      const pulled = await cli(['--server', rogue.url, 'registry', 'pull', '--dir', dir]);
      expectExit(pulled, EXIT.FAILED);
      expect(pulled.stderr).toContain('cursor did not move');
      expect(await snapshot(root)).toEqual(before);
    });
  });

  it('a state file whose entry key is a path is refused by name; what it names outside stays', async () => {
    const state = JSON.parse(await readFile(join(dir, STATE), 'utf8')) as Json;
    const entries = { ...state.entries, 'tool/../../victim': { revision: 1, hash: 'h' } };
    await writeFile(join(dir, STATE), JSON.stringify({ ...state, entries }));
    // The server calls the deletion a conflict and has no entity: taking theirs would remove the file.
    rogue.pushes = () => ({
      applied: [],
      conflicts: [
        { index: 0, kind: 'tool', name: '../../victim', op: 'delete', baseRevision: 1, currentRevision: 2 },
      ].map((c) => ({ ...c, reason: 'NOT_FOUND' })),
    });
    const before = await snapshot(root);
    const pushed = await cli(['--server', rogue.url, 'registry', 'push', '--resolve', 'theirs', '--dir', dir]);
    expectExit(pushed, EXIT.USAGE);
    expect(pushed.stderr).toContain('entries "tool/../../victim": name');
    expect(await snapshot(root)).toEqual(before);
    expect(rogue.received.map((r) => r.method)).not.toContain('_cleveragents/sync/push');
  });

  it.each([
    ['names another entry than the one sent', 0, 'other'],
    ['names a change that was not sent', 7, 'kept'],
  ])('push: an answer that %s is refused before any of it is applied', async (_what, index, name) => {
    await writeFile(join(dir, 'tool', 'kept.yaml'), 'spec:\n  description: mine\n');
    await writeFile(join(dir, 'tool', 'other.yaml'), 'spec:\n  description: my new one\n');
    const entity = entityOf('tool', name, { description: 'theirs' }, 5);
    rogue.pushes = () => ({
      applied: [],
      conflicts: [
        {
          index,
          kind: 'tool',
          name,
          op: 'upsert',
          baseRevision: 1,
          currentRevision: 5,
          reason: 'STALE_REVISION',
          entity,
        },
      ],
    });
    const before = await snapshot(root);
    const pushed = await cli(['--server', rogue.url, 'registry', 'push', '--resolve', 'theirs', '--dir', dir]);
    expectExit(pushed, EXIT.FAILED);
    expect(pushed.stderr).toContain("The server's answer to the push is refused: conflicts");
    expect(await snapshot(root)).toEqual(before);
  });

  describe('links in the folder: nothing is written, removed or read through one', () => {
    it('pull: a kind directory that is a link out of the folder is refused before anything is written', async () => {
      await symlink(join(root, 'outside'), join(dir, 'skill'));
      rogue.pages = (cursor) => ({
        changes: cursor === 1 ? [upsert(2, 'tool', 'fine'), upsert(3, 'skill', 'secret')] : [],
        cursor: 3,
        hasMore: false,
      });
      const before = await snapshot(root);
      const pulled = await cli(['--server', rogue.url, 'registry', 'pull', '--dir', dir]);
      expectExit(pulled, EXIT.USAGE);
      expect(pulled.stderr).toContain('skill/: is a symbolic link');
      expect(await snapshot(root)).toEqual(before);
    });

    it('push: an entry file that is a link to a file outside is refused, never read or sent', async () => {
      await symlink(join(root, 'outside', 'secret.yaml'), join(dir, 'tool', 'leak.yaml'));
      const pushed = await cli(['--server', rogue.url, 'registry', 'push', '--dir', dir]);
      expectExit(pushed, EXIT.USAGE);
      expect(pushed.stderr).toContain('tool/leak.yaml: is a symbolic link');
      expect(rogue.received.map((r) => r.method)).not.toContain('_cleveragents/sync/push');
    });
  });

  describe('the server a folder names: credentials go only where the user said', () => {
    /** A folder (as a clone brings it) whose state names the rogue server; the user's is elsewhere. */
    async function clonedFolder(): Promise<void> {
      const state = JSON.parse(await readFile(join(dir, STATE), 'utf8')) as Json;
      await writeFile(join(dir, STATE), JSON.stringify({ ...state, server: rogue.url }));
      await writeFile(join(dir, 'tool', 'kept.yaml'), 'spec:\n  description: changed\n');
    }

    it.each([['pull'], ['push'], ['status --remote']])(
      'off a terminal, %s refuses the folder’s server and sends it nothing',
      async (command) => {
        await clonedFolder();
        const refused = await cli(['registry', ...command.split(' '), '--dir', dir]);
        expectExit(refused, EXIT.USAGE);
        expect(refused.stderr).toContain(`names the server ${rogue.url}`);
        expect(refused.stderr).toContain(`pass --server ${rogue.url}`);
        expect(rogue.received).toEqual([]);
      },
    );

    it('the user’s own server is another: the folder’s is refused, and naming it with --server goes there', async () => {
      await clonedFolder();
      const mine = 'http://127.0.0.1:9';
      await mkdir(join(home.dir, 'config', 'cleveragents'), { recursive: true });
      await writeFile(
        join(home.dir, 'config', 'cleveragents', 'credentials.json'),
        JSON.stringify({ defaultServer: mine, contexts: {}, servers: { [mine]: { apiKey: 'k', savedAt: '' } } }),
      );
      try {
        const refused = await cli(['registry', 'push', '--dir', dir]);
        expectExit(refused, EXIT.USAGE);
        expect(refused.stderr).toContain(`your server is ${mine}`);
        expect(rogue.received).toEqual([]);
      } finally {
        await writeFile(join(home.dir, 'config', 'cleveragents', 'credentials.json'), '{}');
      }
      // Named by the user, the same server is theirs to use: the recorder sees the key then.
      expectExit(await cli(['--server', rogue.url, 'registry', 'push', '--dir', dir]), EXIT.OK);
      expect(rogue.received.some((r) => r.credentials['x-api-key'] === KEY)).toBe(true);
    });

    it.each([
      ['Enter (no)', KEYS.enter, EXIT.USAGE],
      ['y', `y${KEYS.enter}`, EXIT.OK],
    ])('in a terminal, the person is asked naming the server; %s', async (_answer, keys, code) => {
      await clonedFolder();
      const session = TerminalSession.start(
        process.execPath,
        [CLI_BIN, 'registry', 'status', '--remote', '--dir', dir],
        {
          cwd: home.dir,
          env: { ...terminalEnv(home), CLEVERAGENTS_API_KEY: KEY },
        },
      );
      try {
        await session.waitFor('send it your credentials?', 30000);
        expect(session.text()).toContain(`This folder names the server ${rogue.url}`);
        expect(rogue.received).toEqual([]);
        session.write(keys);
        const { exitCode } = await session.exited;
        expect({ exitCode, screen: session.text() }).toEqual({ exitCode: code, screen: expect.any(String) });
      } finally {
        session.kill();
      }
      expect(rogue.received.length > 0).toBe(code === EXIT.OK);
    });
  });

  describe('file sizes and counts are bounded before anything is read whole', () => {
    it('a 200 MB entry file is refused by name, by push and status, without reading it', async () => {
      await writeFile(join(dir, 'tool', 'big.yaml'), '');
      await truncate(join(dir, 'tool', 'big.yaml'), 200 * 1024 * 1024);
      const pushed = await cli(['--server', rogue.url, 'registry', 'push', '--dir', dir]);
      expectExit(pushed, EXIT.USAGE);
      expect(pushed.stderr).toContain('tool/big.yaml: is 209715200 bytes, more than the 1048576 bytes');
      expect(rogue.received.map((r) => r.method)).not.toContain('_cleveragents/sync/push');
      const status = await cli(['registry', 'status', '--dir', dir]);
      expectExit(status, EXIT.OK);
      expect(status.stdout).toContain('tool/big.yaml: is 209715200 bytes');
    });

    it('a file whose name carries escape sequences (a cloned folder) is listed without them', async () => {
      await writeFile(join(dir, 'tool', 'x\u001b]52;c;aGk=\u0007\u001b[2K.yaml'), 'spec: {}\n');
      const status = await cli(['registry', 'status', '--dir', dir]);
      expectExit(status, EXIT.OK);
      expect(status.stdout).toContain('tool/x\\e]52;c;aGk=\\x07\\e[2K.yaml');
      expect(status.stdout + status.stderr).not.toMatch(/\u001b|\u0007/);
    });

    it('more entry files than a folder may hold are refused before any is read', async () => {
      await mkdir(join(dir, 'skill'));
      for (let i = 0; i <= 10_000; i++) await writeFile(join(dir, 'skill', `s${i}.yaml`), 'spec: {}\n');
      expect(existsSync(join(dir, 'skill', 's10000.yaml'))).toBe(true);
      const status = await cli(['registry', 'status', '--dir', dir]);
      expectExit(status, EXIT.USAGE);
      expect(status.stderr).toContain('more than 10000 entry files');
    });
  });
});
