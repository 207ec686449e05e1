import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import YAML from 'yaml';
import { EXIT } from '../../packages/cli/src/exit-codes.js';
import { REGISTRY_KINDS } from '../../packages/contract/src/index.js';
import { cliHome, expectExit, runCli, terminalEnv, type CliHome, type CliRun } from '../support/cli.js';
import { createEmbeddedTestDatabase, type TestDatabase } from '../support/database.js';
import { extensionCalls, freePort, startServerWithBootstrapKey, type TestServer } from '../support/server.js';
import { assertCliBuilt, CLI_BIN, KEYS, TerminalSession } from '../support/terminal.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * `cleveragents registry pull|status|push` against a real server (embedded database, API keys): two
 * people, Alice and Bob, each with a folder of the same namespace, edit offline and push. The CLI runs
 * as a real process, with pipes for scripts and on a real pseudo-terminal for the interactive
 * resolution of conflicts. The tests run in order, each on the folders the previous ones left.
 */

type Json = Record<string, any>;

const STATE = '.cleveragents-sync.json';

const SEED: { kind: string; name: string; spec: Json; labels?: Record<string, string> }[] = [
  {
    kind: 'tool',
    name: 'read_file',
    spec: {
      description: 'Reads a file',
      inputSchema: { type: 'object' },
      runsOn: 'client',
      clientMethod: 'fs/read_text_file',
    },
    labels: { team: 'core' },
  },
  { kind: 'tool', name: 'grep', spec: { description: 'Searches', inputSchema: { type: 'object' }, runsOn: 'server' } },
  { kind: 'skill', name: 'code-review', spec: { description: 'Code review', instructions: 'Read the diff.' } },
  { kind: 'skill', name: 'notes', spec: { description: 'Notes', instructions: 'Keep notes.' } },
];

/** The last line of a --json run, parsed. */
function lastJson(run: CliRun): Json {
  const lines = run.stdout.trim().split('\n');
  return JSON.parse(lines.at(-1)!) as Json;
}

/** Every entry file of a folder, parsed, by `<kind>/<name>`. */
async function folderEntries(dir: string): Promise<Record<string, Json>> {
  const entries: Record<string, Json> = {};
  for (const kind of REGISTRY_KINDS) {
    if (!existsSync(join(dir, kind))) continue;
    for (const file of await readdir(join(dir, kind))) {
      if (!file.endsWith('.yaml')) continue;
      entries[`${kind}/${file.slice(0, -5)}`] = YAML.parse(await readFile(join(dir, kind, file), 'utf8')) as Json;
    }
  }
  return entries;
}

async function writeEntry(dir: string, key: string, content: Json): Promise<void> {
  await mkdir(join(dir, key.split('/')[0]), { recursive: true });
  await writeFile(join(dir, `${key}.yaml`), YAML.stringify(content));
}

async function readEntry(dir: string, key: string): Promise<Json> {
  return YAML.parse(await readFile(join(dir, `${key}.yaml`), 'utf8')) as Json;
}

async function stateOf(dir: string): Promise<Json> {
  return JSON.parse(await readFile(join(dir, STATE), 'utf8')) as Json;
}

describe('cleveragents registry: a namespace as a folder, edited offline by two people', () => {
  let db: TestDatabase;
  let server: TestServer;
  let home: CliHome;
  let ownerKey: string;
  const keys = { alice: '', bob: '' };
  let alice: string;
  let bob: string;
  const { ok } = extensionCalls(() => server);
  const asOwner = (method: string, params: Json = {}) => ok(method, params, { 'x-api-key': ownerKey });

  beforeAll(async () => {
    assertCliBuilt();
    home = await cliHome();
    db = await createEmbeddedTestDatabase();
    ({ server, bootstrapKey: ownerKey } = await startServerWithBootstrapKey(db));
    for (const who of ['alice', 'bob'] as const) {
      keys[who] = (await asOwner('auth/apikey/create', { name: who, role: 'member' })).key as string;
    }
    for (const entry of SEED) await asOwner('registry/create', { ...entry });
    alice = join(home.dir, 'alice');
    bob = join(home.dir, 'bob');
  }, 120000);

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
    await ifAssigned(home)?.cleanup();
  });

  const as = (who: keyof typeof keys, args: string[]) =>
    runCli(['--server', server.baseUrl, '--api-key', keys[who], ...args], { home, timeoutMs: 90000 });

  /** Every live entry through registry/list, as the folder holds them: spec and labels by `<kind>/<name>`. */
  async function serverEntries(): Promise<{ entries: Record<string, Json>; revisions: Record<string, number> }> {
    const entries: Record<string, Json> = {};
    const revisions: Record<string, number> = {};
    let pageToken = '';
    do {
      const page = await asOwner('registry/list', { pageSize: 100, pageToken });
      for (const item of page.items) {
        entries[`${item.kind}/${item.name}`] = { spec: item.spec, labels: item.labels };
        revisions[`${item.kind}/${item.name}`] = item.revision;
      }
      pageToken = page.nextPageToken;
    } while (pageToken);
    return { entries, revisions };
  }

  /** The folder holds exactly the server's registry, and its state the server's revisions and latest change. */
  async function expectMirror(dir: string): Promise<void> {
    const { entries, revisions } = await serverEntries();
    expect(await folderEntries(dir)).toEqual(entries);
    const state = await stateOf(dir);
    expect(
      Object.fromEntries(Object.entries(state.entries).map(([key, base]: [string, any]) => [key, base.revision])),
    ).toEqual(revisions);
    expect(state.cursor).toBe((await asOwner('sync/status')).latestSeq);
  }

  it('pull: the folder equals registry/list exactly, one YAML file per entry, and a second pull changes nothing', async () => {
    const pulled = await as('alice', ['--json', 'registry', 'pull', '--dir', alice]);
    expectExit(pulled, EXIT.OK);
    const result = lastJson(pulled);
    expect(result.namespace).toBe((await asOwner('sync/status')).namespace);
    // The built-ins (4 profiles, the default actor) and the four seeded entries, all new to the folder.
    expect(result.entries).toHaveLength(9);
    expect(new Set(result.entries.map((e: Json) => e.action))).toEqual(new Set(['added']));
    await expectMirror(alice);
    expect(await readEntry(alice, 'tool/read_file')).toEqual({ spec: SEED[0].spec, labels: { team: 'core' } });

    const again = await as('alice', ['--json', 'registry', 'pull', '--dir', alice]);
    expectExit(again, EXIT.OK);
    expect(lastJson(again).entries).toEqual([]);

    const human = await as('bob', ['registry', 'pull', '--dir', bob]);
    expectExit(human, EXIT.OK);
    expect(human.stdout).toMatch(/^CHANGE\s+KIND\s+NAME\s+REVISION\s+FILE$/m);
    expect(human.stdout).toMatch(/^added\s+tool\s+read_file\s+1\s+tool\/read_file\.yaml$/m);
    await expectMirror(bob);
  });

  it('status: offline edits are listed as added, modified and deleted without reaching any server', async () => {
    // Alice: edits read_file, creates the skill triage, deletes the skill notes.
    await writeEntry(alice, 'tool/read_file', {
      spec: { ...SEED[0].spec, description: 'Reads a text file of the workspace' },
      labels: { team: 'core' },
    });
    await writeEntry(alice, 'skill/triage', { spec: { description: 'Triage by Alice', instructions: 'Sort issues.' } });
    await rm(join(alice, 'skill/notes.yaml'));
    // Bob, from the same revisions: a timeout on read_file, new instructions for notes, his own triage, a new tool.
    await writeEntry(bob, 'tool/read_file', {
      spec: { ...SEED[0].spec, timeoutSeconds: 10 },
      labels: { team: 'core' },
    });
    await writeEntry(bob, 'skill/notes', {
      spec: { description: 'Notes', instructions: 'Keep short notes.' },
      labels: {},
    });
    await writeEntry(bob, 'skill/triage', { spec: { description: 'Triage by Bob', instructions: 'Label issues.' } });
    await writeEntry(bob, 'tool/bob-tool', {
      spec: { description: "Bob's", inputSchema: { type: 'object' }, runsOn: 'server' },
    });
    // A reformatted file (another YAML style, a comment) is not a change.
    const grep = await readEntry(alice, 'tool/grep');
    await writeFile(join(alice, 'tool/grep.yaml'), `# searched a lot\n${JSON.stringify(grep, null, 4)}\n`);

    // No server answers on this port: status does not need one.
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    const run = await runCli(['--server', nowhere, '--json', 'registry', 'status', '--dir', alice], { home });
    expectExit(run, EXIT.OK);
    expect(lastJson(run).changes).toEqual([
      { kind: 'skill', name: 'notes', state: 'deleted', file: 'skill/notes.yaml', baseRevision: 1 },
      { kind: 'skill', name: 'triage', state: 'added', file: 'skill/triage.yaml', baseRevision: 0 },
      { kind: 'tool', name: 'read_file', state: 'modified', file: 'tool/read_file.yaml', baseRevision: 1 },
    ]);
    const table = await runCli(['--server', nowhere, 'registry', 'status', '--dir', bob], { home });
    expectExit(table, EXIT.OK);
    expect(table.stdout).toMatch(/^modified\s+skill\s+notes\s+1\s+skill\/notes\.yaml$/m);
    expect(table.stdout).toMatch(/^added\s+tool\s+bob-tool\s+—\s+tool\/bob-tool\.yaml$/m);
  });

  it('push: the changes apply from their base revisions, and the folder moves on to the server', async () => {
    const run = await as('alice', ['--json', 'registry', 'push', '--dir', alice]);
    expectExit(run, EXIT.OK);
    const result = lastJson(run);
    expect(result.conflicts).toEqual([]);
    expect(result.applied.map((a: Json) => [a.file, a.op, a.revision])).toEqual([
      ['skill/notes.yaml', 'delete', 2],
      ['skill/triage.yaml', 'upsert', 1],
      ['tool/read_file.yaml', 'upsert', 2],
    ]);
    await expectMirror(alice);
    const status = await as('alice', ['--json', 'registry', 'status', '--dir', alice]);
    expect(lastJson(status).changes).toEqual([]);
  });

  it("push: the other folder's stale changes are conflicts (JSON, exit 8), never overwrites; the rest applies", async () => {
    const before = await serverEntries();
    const run = await as('bob', ['--json', 'registry', 'push', '--dir', bob]);
    expectExit(run, EXIT.CONFLICT);
    const result = lastJson(run);
    expect(result.applied.map((a: Json) => a.file)).toEqual(['tool/bob-tool.yaml']);
    expect(result.conflicts.map((c: Json) => [c.file, c.op, c.reason, c.baseRevision, c.currentRevision])).toEqual([
      ['skill/notes.yaml', 'upsert', 'NOT_FOUND', 1, 2],
      ['skill/triage.yaml', 'upsert', 'ALREADY_EXISTS', 0, 1],
      ['tool/read_file.yaml', 'upsert', 'STALE_REVISION', 1, 2],
    ]);
    const readFileConflict = result.conflicts[2];
    expect(readFileConflict.yours).toEqual({
      spec: { ...SEED[0].spec, timeoutSeconds: 10 },
      labels: { team: 'core' },
    });
    expect(readFileConflict.theirs).toEqual(before.entries['tool/read_file']);
    expect(readFileConflict.diff).toContain('-  description: Reads a file');
    expect(readFileConflict.diff).toContain('+  description: Reads a text file of the workspace');
    expect(readFileConflict.diff).toContain('-  timeoutSeconds: 10');
    expect(result.conflicts[0].theirs).toBeNull();

    // Alice's versions stand; only bob-tool was added.
    const after = await serverEntries();
    expect(after.entries).toEqual({ ...before.entries, 'tool/bob-tool': { spec: expect.any(Object), labels: {} } });

    // Without --json, off a terminal: each conflict side by side with its diff, and the same exit code.
    const human = await as('bob', ['registry', 'push', '--dir', bob]);
    expectExit(human, EXIT.CONFLICT);
    expect(human.stdout).toContain(
      'conflict: tool/read_file.yaml — your edit (from revision 1), changed on the server since your copy (revision 2)',
    );
    expect(human.stdout).toMatch(/yours\s+│ server's \(revision 2\)/);
    expect(human.stdout).toContain('3 conflict(s) left');
  });

  it('status --remote: what the server has newer, and which of it collides with a local change', async () => {
    const run = await as('bob', ['--json', 'registry', 'status', '--remote', '--dir', bob]);
    expectExit(run, EXIT.OK);
    const { remote } = lastJson(run);
    expect(remote.latestSeq).toBe((await asOwner('sync/status')).latestSeq);
    expect(remote.newer.map((c: Json) => [c.kind, c.name, c.op, c.collides])).toEqual([
      ['skill', 'notes', 'delete', true],
      ['skill', 'triage', 'upsert', true],
      ['tool', 'read_file', 'upsert', true],
      ['tool', 'bob-tool', 'upsert', false],
    ]);
  });

  it('pull: changes meeting local edits are conflicts that keep the local files; a clean tombstone deletes the file', async () => {
    const mine = await folderEntries(bob);
    const run = await as('bob', ['--json', 'registry', 'pull', '--dir', bob]);
    expectExit(run, EXIT.CONFLICT);
    const conflicts = lastJson(run).entries.filter((e: Json) => e.action === 'conflict');
    expect(conflicts.map((e: Json) => [e.file, e.local, e.server])).toEqual([
      ['skill/notes.yaml', 'modified', 'delete'],
      ['skill/triage.yaml', 'added', 'upsert'],
      ['tool/read_file.yaml', 'modified', 'upsert'],
    ]);
    const now = await folderEntries(bob);
    for (const key of ['skill/notes', 'skill/triage', 'tool/read_file']) expect(now[key]).toEqual(mine[key]);
    // The base revisions stay where the edits were made, so a push still meets the conflicts.
    const state = await stateOf(bob);
    expect(state.entries['tool/read_file'].revision).toBe(1);
    expect(state.entries['skill/notes'].revision).toBe(1);
    expect(state.entries['skill/triage']).toBeUndefined();
    expect(state.cursor).toBe((await asOwner('sync/status')).latestSeq);

    // A tombstone for a file left as pulled removes it: Alice deletes grep, Bob pulls.
    await rm(join(alice, 'tool/grep.yaml'));
    expectExit(await as('alice', ['registry', 'push', '--dir', alice]), EXIT.OK);
    const tombstone = await as('bob', ['--json', 'registry', 'pull', '--dir', bob]);
    expectExit(tombstone, EXIT.OK);
    expect(lastJson(tombstone).entries).toEqual([
      { kind: 'tool', name: 'grep', file: 'tool/grep.yaml', action: 'deleted', revision: 2 },
    ]);
    expect(existsSync(join(bob, 'tool/grep.yaml'))).toBe(false);
  });

  it('push in a terminal: each conflict side by side, resolved by keystrokes — take the server’s, edit, keep mine', async () => {
    const session = TerminalSession.start(
      process.execPath,
      [CLI_BIN, '--server', server.baseUrl, '--api-key', keys.bob, 'registry', 'push', '--dir', bob],
      {
        cwd: home.dir,
        env: {
          ...terminalEnv(home),
          // The "editor" merges by rewriting the description (the server's version below is commented out).
          EDITOR: "sed -i 's/^  description: .*/  description: Triage, merged by hand/'",
        },
      },
    );
    try {
      await session.waitFor('Resolve skill/notes.yaml', 60000);
      expect(session.text()).toContain(
        'conflict: skill/notes.yaml — your edit (from revision 1), deleted on the server',
      );
      expect(session.text()).toMatch(
        /spec:\s+│ \(deleted\)\n\s+description: Notes\s*│?\n\s+instructions: Keep short notes\./,
      );
      session.write(`t${KEYS.enter}`);
      await session.waitFor('Resolve skill/triage.yaml');
      expect(session.text()).toMatch(/description: Triage by Bob\s+│\s+description: Triage by Alice/);
      session.write(`e${KEYS.enter}`);
      await session.waitFor('Resolve tool/read_file.yaml');
      expect(session.text()).toContain('+  description: Reads a text file of the workspace');
      session.write(`m${KEYS.enter}`);
      const { exitCode } = await session.exited;
      expect({ exitCode, screen: session.text() }).toEqual({ exitCode: EXIT.OK, screen: expect.any(String) });
      expect(session.text()).toMatch(/pushed\s+skill\s+triage\s+2\s+skill\/triage\.yaml/);
      expect(session.text()).toMatch(/pushed\s+tool\s+read_file\s+3\s+tool\/read_file\.yaml/);
    } finally {
      session.kill();
    }

    // Theirs: notes is gone here as on the server. Edit: Bob's triage with the merged description. Mine: his timeout.
    const { entries } = await serverEntries();
    expect(existsSync(join(bob, 'skill/notes.yaml'))).toBe(false);
    expect(entries['skill/notes']).toBeUndefined();
    expect(entries['skill/triage']).toEqual({
      spec: { description: 'Triage, merged by hand', instructions: 'Label issues.' },
      labels: {},
    });
    expect(entries['tool/read_file']).toEqual({
      spec: { ...SEED[0].spec, timeoutSeconds: 10 },
      labels: { team: 'core' },
    });
    await expectMirror(bob);
    const status = await as('bob', ['--json', 'registry', 'status', '--dir', bob]);
    expect(lastJson(status).changes).toEqual([]);
  });

  it('push --resolve theirs / mine: the same choices for scripts', async () => {
    expectExit(await as('alice', ['registry', 'pull', '--dir', alice]), EXIT.OK);
    // Both edit code-review; Alice pushes first, Bob takes hers.
    await writeEntry(alice, 'skill/code-review', {
      spec: { description: 'Review (Alice)', instructions: 'Read the diff.' },
    });
    await writeEntry(bob, 'skill/code-review', {
      spec: { description: 'Review (Bob)', instructions: 'Read the diff.' },
    });
    expectExit(await as('alice', ['registry', 'push', '--dir', alice]), EXIT.OK);
    const theirs = await as('bob', ['--json', 'registry', 'push', '--resolve', 'theirs', '--dir', bob]);
    expectExit(theirs, EXIT.OK);
    expect(lastJson(theirs)).toMatchObject({
      applied: [],
      conflicts: [],
      resolved: [{ file: 'skill/code-review.yaml', resolution: 'theirs' }],
    });
    expect(await readEntry(bob, 'skill/code-review')).toEqual({
      spec: { description: 'Review (Alice)', instructions: 'Read the diff.' },
      labels: {},
    });

    // Both edit bob-tool; Bob pushes first, Alice keeps hers over his.
    expectExit(await as('alice', ['registry', 'pull', '--dir', alice]), EXIT.OK);
    const tool = (description: string) => ({
      spec: { description, inputSchema: { type: 'object' }, runsOn: 'server' },
      labels: {},
    });
    await writeEntry(bob, 'tool/bob-tool', tool('Bob again'));
    await writeEntry(alice, 'tool/bob-tool', tool('Alice wins'));
    expectExit(await as('bob', ['registry', 'push', '--dir', bob]), EXIT.OK);
    const mine = await as('alice', ['--json', 'registry', 'push', '--resolve', 'mine', '--dir', alice]);
    expectExit(mine, EXIT.OK);
    expect(lastJson(mine)).toMatchObject({
      applied: [{ file: 'tool/bob-tool.yaml', revision: 3 }],
      resolved: [{ file: 'tool/bob-tool.yaml', resolution: 'mine' }],
      conflicts: [],
    });
    expect((await serverEntries()).entries['tool/bob-tool']).toEqual(tool('Alice wins'));
    // Bob's change came between Alice's pull and her push: her cursor waits before it, and a pull catches up.
    expect((await stateOf(alice)).cursor).toBe((await asOwner('sync/status')).latestSeq - 2);
    for (const [who, dir] of [
      ['alice', alice],
      ['bob', bob],
    ] as const) {
      expectExit(await as(who, ['registry', 'pull', '--dir', dir]), EXIT.OK);
      await expectMirror(dir);
    }
  });

  it('a name deleted and created again: the revision counts on, and a pull across both leaves the new entry', async () => {
    const grep = {
      spec: { description: 'Searches again', inputSchema: { type: 'object' }, runsOn: 'server' },
      labels: {},
    };
    // grep was deleted (revision 2); Alice creates it again from scratch.
    await writeEntry(alice, 'tool/grep', grep);
    const created = await as('alice', ['--json', 'registry', 'push', '--dir', alice]);
    expectExit(created, EXIT.OK);
    expect(lastJson(created).applied).toMatchObject([{ file: 'tool/grep.yaml', op: 'upsert', revision: 3 }]);
    // And Bob's folder: delete then create again of bob-tool by Alice, pulled by Bob in one go.
    await rm(join(alice, 'tool/bob-tool.yaml'));
    expectExit(await as('alice', ['registry', 'push', '--dir', alice]), EXIT.OK);
    await writeEntry(alice, 'tool/bob-tool', {
      spec: { description: 'Reborn', inputSchema: { type: 'object' }, runsOn: 'server' },
    });
    expectExit(await as('alice', ['registry', 'push', '--dir', alice]), EXIT.OK);
    const pulled = await as('bob', ['--json', 'registry', 'pull', '--dir', bob]);
    expectExit(pulled, EXIT.OK);
    expect(lastJson(pulled).entries).toEqual([
      { kind: 'tool', name: 'grep', file: 'tool/grep.yaml', action: 'added', revision: 3 },
      { kind: 'tool', name: 'bob-tool', file: 'tool/bob-tool.yaml', action: 'updated', revision: 5 },
    ]);
    expect(await readEntry(bob, 'tool/bob-tool')).toEqual({
      spec: { description: 'Reborn', inputSchema: { type: 'object' }, runsOn: 'server' },
      labels: {},
    });
    await expectMirror(bob);
  });

  it('push --atomic: one conflicting change and nothing is applied; resolved, all of it is', async () => {
    expectExit(await as('bob', ['registry', 'pull', '--dir', bob]), EXIT.OK);
    // Bob moves code-review on; Alice, from the old revision, edits it and adds a tool.
    await writeEntry(bob, 'skill/code-review', { spec: { description: 'Review v3', instructions: 'Read the diff.' } });
    expectExit(await as('bob', ['registry', 'push', '--dir', bob]), EXIT.OK);
    await writeEntry(alice, 'skill/code-review', {
      spec: { description: 'Review by Alice', instructions: 'Read it twice.' },
    });
    await writeEntry(alice, 'tool/atomic-new', {
      spec: { description: 'New', inputSchema: { type: 'object' }, runsOn: 'server' },
    });
    const before = await asOwner('sync/status');
    const stateBefore = await stateOf(alice);

    const run = await as('alice', ['--json', 'registry', 'push', '--atomic', '--dir', alice]);
    expectExit(run, EXIT.CONFLICT);
    const result = lastJson(run);
    expect(result.applied).toEqual([]);
    expect(result.conflicts.map((c: Json) => [c.file, c.reason])).toEqual([
      ['skill/code-review.yaml', 'STALE_REVISION'],
    ]);
    expect(await asOwner('sync/status')).toEqual(before);
    expect((await serverEntries()).entries['tool/atomic-new']).toBeUndefined();
    expect(await stateOf(alice)).toEqual(stateBefore);
    const human = await as('alice', ['registry', 'push', '--atomic', '--dir', alice]);
    expectExit(human, EXIT.CONFLICT);
    expect(human.stdout).toContain('1 conflict(s) left (atomic: nothing was applied)');

    const resolved = await as('alice', ['--json', 'registry', 'push', '--atomic', '--resolve', 'mine', '--dir', alice]);
    expectExit(resolved, EXIT.OK);
    expect(lastJson(resolved).applied.map((a: Json) => a.file)).toEqual([
      'skill/code-review.yaml',
      'tool/atomic-new.yaml',
    ]);
    expectExit(await as('alice', ['registry', 'pull', '--dir', alice]), EXIT.OK);
    await expectMirror(alice);
  });

  it('local validation: a broken file is refused with its field path before anything is sent', async () => {
    const before = await asOwner('sync/status');
    await writeEntry(alice, 'actor/helper', {
      spec: { localGraph: 'orchestrator', model: { model: 'm', temperature: 'hot' } },
      labels: {},
    });
    await writeEntry(alice, 'tool/fine', {
      spec: { description: 'Fine', inputSchema: { type: 'object' }, runsOn: 'server' },
    });
    await writeEntry(alice, 'skill/half', { spec: { description: 'No instructions' }, labels: { 'Bad Key': 'x' } });
    await writeFile(join(alice, 'skill/broken.yaml'), 'spec: [unclosed\n');

    const run = await as('alice', ['registry', 'push', '--dir', alice]);
    expectExit(run, EXIT.USAGE);
    expect(run.stderr).toContain('skill/broken.yaml: not valid YAML');
    const json = await as('alice', ['--json', 'registry', 'push', '--dir', alice]);
    expectExit(json, EXIT.USAGE);
    expect(lastJson(json).error.violations).toEqual([
      { file: 'skill/broken.yaml', field: '', description: expect.stringContaining('not valid YAML') },
    ]);
    expect(await asOwner('sync/status')).toEqual(before);

    // The YAML mended: what the published contract says of each spec, by file and field.
    await rm(join(alice, 'skill/broken.yaml'));
    const checked = await as('alice', ['registry', 'push', '--dir', alice]);
    expectExit(checked, EXIT.USAGE);
    expect(checked.stderr).toContain('actor/helper.yaml: spec.model.temperature: must be a number');
    expect(checked.stderr).toContain('skill/half.yaml: spec.instructions: is required');
    expect(checked.stderr).toContain('skill/half.yaml: labels');
    expect(checked.stderr).not.toContain('tool/fine.yaml');
    expect(await asOwner('sync/status')).toEqual(before);

    // A rule only the server checks (a URL's shape) is named the same way, and nothing is applied either.
    await writeEntry(alice, 'actor/helper', {
      spec: { localGraph: 'orchestrator', model: { model: 'm', baseUrl: 'not a url' } },
    });
    await rm(join(alice, 'skill/half.yaml'));
    const server = await as('alice', ['registry', 'push', '--dir', alice]);
    expectExit(server, EXIT.USAGE);
    expect(server.stderr).toMatch(/actor\/helper\.yaml: spec\.model\.baseUrl: /);
    expect(await asOwner('sync/status')).toEqual(before);

    await rm(join(alice, 'actor/helper.yaml'));
    expectExit(await as('alice', ['registry', 'push', '--dir', alice]), EXIT.OK);
  });

  it('more changes than one push takes (500): sent in parts, all recorded; --atomic refuses before sending', async () => {
    expectExit(await as('bob', ['registry', 'pull', '--dir', bob]), EXIT.OK);
    const names = Array.from({ length: 501 }, (_, i) => `bulk-${String(i).padStart(3, '0')}`);
    for (const name of names) {
      await writeEntry(bob, `skill/${name}`, { spec: { description: name, instructions: 'Do it.' }, labels: {} });
    }
    const before = await asOwner('sync/status');
    const atomic = await as('bob', ['registry', 'push', '--atomic', '--dir', bob]);
    expectExit(atomic, EXIT.USAGE);
    expect(atomic.stderr).toContain('--atomic takes at most 500 changes in one push; this folder has 501');
    expect(await asOwner('sync/status')).toEqual(before);

    const run = await as('bob', ['--json', 'registry', 'push', '--dir', bob]);
    expectExit(run, EXIT.OK);
    const applied = lastJson(run).applied as Json[];
    expect(applied.map((a) => a.file)).toEqual(names.map((name) => `skill/${name}.yaml`));
    expect((await asOwner('sync/status')).latestSeq).toBe(before.latestSeq + 501);
    expect((await stateOf(bob)).cursor).toBe(before.latestSeq + 501);
    await expectMirror(bob);
  }, 180000);

  it('push in a terminal, left for later: the conflict stays (exit 8), nothing is written either way', async () => {
    expectExit(await as('alice', ['registry', 'pull', '--dir', alice]), EXIT.OK);
    expectExit(await as('bob', ['registry', 'pull', '--dir', bob]), EXIT.OK);
    const review = (description: string) => ({ spec: { description, instructions: 'Read the diff.' }, labels: {} });
    await writeEntry(alice, 'skill/code-review', review('Review, later'));
    await writeEntry(bob, 'skill/code-review', review('Review, not now'));
    expectExit(await as('alice', ['registry', 'push', '--dir', alice]), EXIT.OK);
    const before = await asOwner('sync/status');
    const session = TerminalSession.start(
      process.execPath,
      [CLI_BIN, '--server', server.baseUrl, '--api-key', keys.bob, 'registry', 'push', '--dir', bob],
      { cwd: home.dir, env: terminalEnv(home) },
    );
    try {
      await session.waitFor('Resolve skill/code-review.yaml', 60000);
      session.write(`l${KEYS.enter}`);
      const { exitCode } = await session.exited;
      expect({ exitCode, screen: session.text() }).toEqual({ exitCode: EXIT.CONFLICT, screen: expect.any(String) });
      expect(session.text()).toContain('1 conflict(s) left');
    } finally {
      session.kill();
    }
    expect(await readEntry(bob, 'skill/code-review')).toEqual(review('Review, not now'));
    expect(await asOwner('sync/status')).toEqual(before);
    expectExit(await as('bob', ['registry', 'push', '--resolve', 'theirs', '--dir', bob]), EXIT.OK);
    expect(await readEntry(bob, 'skill/code-review')).toEqual(review('Review, later'));
  });

  it('after everything, every folder pulled equals registry/list, a new one too', async () => {
    for (const who of ['alice', 'bob'] as const) {
      const dir = who === 'alice' ? alice : bob;
      expectExit(await as(who, ['registry', 'pull', '--dir', dir]), EXIT.OK);
      await expectMirror(dir);
    }
    const fresh = join(home.dir, 'fresh');
    expectExit(await as('bob', ['registry', 'pull', '--dir', fresh]), EXIT.OK);
    await expectMirror(fresh);
    expect(await folderEntries(fresh)).toEqual(await folderEntries(alice));
  });

  it("a folder whose cursor is past the namespace's history (the namespace made again) is refused, untouched", async () => {
    const dir = join(home.dir, 'ahead');
    expectExit(await as('alice', ['registry', 'pull', '--dir', dir]), EXIT.OK);
    const { latestSeq } = await asOwner('sync/status');
    await writeFile(join(dir, STATE), JSON.stringify({ ...(await stateOf(dir)), cursor: latestSeq + 1000 }));
    const entries = await folderEntries(dir);
    const state = await readFile(join(dir, STATE), 'utf8');

    for (const command of ['pull', 'status --remote']) {
      const run = await as('alice', ['registry', ...command.split(' '), '--dir', dir]);
      expectExit(run, EXIT.FAILED);
      expect(run.stderr).toContain(
        'The server no longer has the history this folder was pulled from (the namespace was made again)',
      );
      expect(run.stderr).toContain('move the folder away, pull into a new one, and copy your edits over');
    }
    expect(await folderEntries(dir)).toEqual(entries);
    expect(await readFile(join(dir, STATE), 'utf8')).toBe(state);
  });
});
