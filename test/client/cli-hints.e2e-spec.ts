import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { shellWords } from '../support/cli-unit.js';
import { runCli, shown, type CliHome } from '../support/cli.js';
import { cliRig, type CliRig } from '../support/cli-rig.js';
import type { TestDatabase } from '../support/database.js';
import type { TestServer } from '../support/server.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * A hint that names a command names it as the run reached its server: copied as printed, it reaches
 * the same server. The built CLI against a real server (--server) and its own local server (--local,
 * an embedded data directory), lines piped into `chat`.
 */

describe('hints name the command as this run reached its server', () => {
  let rig: CliRig;
  let server: TestServer;
  let localDb: TestDatabase;
  let home: CliHome;
  let modelEnv: Record<string, string>;

  beforeAll(async () => {
    rig = await cliRig({ tokens: ['Hello', ' there.'] });
    ({ server, localDb, home, modelEnv } = rig);
  }, 90000);

  afterAll(() => ifAssigned(rig)?.close());

  /** The words of the `resume with:` hint `chat` prints for /session after one turn. */
  async function resumeHint(connection: string[]): Promise<string[]> {
    const run = await runCli([...connection, 'chat', '--no-tools'], {
      home,
      env: modelEnv,
      stdin: 'Say hello\n/session\n',
      timeoutMs: 90000,
    });
    expect({ code: run.code, run: shown(run) }).toEqual({ code: 0, run: shown(run) });
    expect(run.stdout).toContain('Hello there.');
    const hint = /^resume with: (.+)$/m.exec(run.stderr);
    if (!hint) throw new Error(`no resume hint\n${shown(run)}`);
    return shellWords(hint[1]);
  }

  it('--local: the hint says --local and the data directory', async () => {
    const dataDir = localDb.env.CLEVERAGENTS_DATA_DIR;
    const words = await resumeHint(['--local', '--data-dir', dataDir]);
    expect(words).toEqual([
      'cleveragents',
      '--local',
      '--data-dir',
      dataDir,
      'chat',
      '--session',
      expect.stringMatching(/^[0-9A-Z]{26}$/),
    ]);
    // Copied as printed, it resumes the session there.
    const resumed = await runCli([...words.slice(1), '--no-tools'], { home, env: modelEnv, stdin: '/session\n' });
    expect({ code: resumed.code, run: shown(resumed) }).toEqual({ code: 0, run: shown(resumed) });
    expect(resumed.stderr).toContain(`session ${words.at(-1)}`);
  }, 120000);

  it('--server: the hint says --server URL', async () => {
    const words = await resumeHint(['--server', server.baseUrl]);
    expect(words).toEqual([
      'cleveragents',
      '--server',
      server.baseUrl,
      'chat',
      '--session',
      expect.stringMatching(/^[0-9A-Z]{26}$/),
    ]);
  });
});
