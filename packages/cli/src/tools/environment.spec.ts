import { describe, expect, it } from '@jest/globals';
import { ClientToolError } from './errors.js';
import { checkAgentEnv, commandEnvironment, trustedPathEntries, type EnvPolicy } from './environment.js';

const policy: EnvPolicy = {
  workspace: '/home/u/project',
  sandboxed: true,
  trustedPath: ['/usr/local/bin', '/usr/bin', '/bin'],
};

function reasonOf(run: () => unknown): { reason: string; field?: string } | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    if (!(error instanceof ClientToolError)) throw error;
    return { reason: error.reason, field: error.details.field as string | undefined };
  }
}

describe('the agent’s variables', () => {
  it.each([
    'LD_PRELOAD',
    'LD_LIBRARY_PATH',
    'LD_AUDIT',
    'DYLD_INSERT_LIBRARIES',
    'BASH_ENV',
    'ENV',
    'BASH_FUNC_ls%%',
    'NODE_OPTIONS',
    'PYTHONPATH',
    'PYTHONSTARTUP',
    'PERL5OPT',
    'RUBYOPT',
    'JAVA_TOOL_OPTIONS',
    'GIT_SSH_COMMAND',
    'GIT_CONFIG_COUNT',
    'GIT_CONFIG_KEY_0',
    'PAGER',
    'HOME',
    'XDG_CONFIG_HOME',
    'GCONV_PATH',
  ])('never %s, whatever --allow-env says', (name) => {
    const got = reasonOf(() => checkAgentEnv([{ name, value: '/home/u/project/x' }], { ...policy, allowed: [name] }));
    expect(got?.reason).toBe(name.includes('%') ? 'INVALID_PARAMS' : 'ENV_NOT_ALLOWED');
    expect(got?.field).toBe('env[0].name');
  });

  it('takes the allow-list, locale categories and names the person added', () => {
    const env = [
      { name: 'CI', value: 'true' },
      { name: 'NO_COLOR', value: '1' },
      { name: 'LC_MESSAGES', value: 'C' },
      { name: 'RUST_BACKTRACE', value: '1' },
      { name: 'MY_FLAG', value: 'on' },
    ];
    expect(checkAgentEnv(env, { ...policy, allowed: ['MY_FLAG'] })).toEqual(env);
    expect(reasonOf(() => checkAgentEnv(env, policy))).toEqual({ reason: 'ENV_NOT_ALLOWED', field: 'env[4].name' });
  });

  it('lets folder variables point only into the workspace, or the sandbox’s own /tmp', () => {
    expect(checkAgentEnv([{ name: 'XDG_CACHE_HOME', value: '/home/u/project/.cache' }], policy)).toHaveLength(1);
    expect(checkAgentEnv([{ name: 'TMPDIR', value: '/tmp/build' }], policy)).toHaveLength(1);
    for (const value of ['/home/u/.cache', '/home/u/project/../.ssh', 'relative/dir', '/home/u/project-other']) {
      expect(reasonOf(() => checkAgentEnv([{ name: 'npm_config_cache', value }], policy))?.reason).toBe(
        'ENV_NOT_ALLOWED',
      );
    }
    expect(
      reasonOf(() => checkAgentEnv([{ name: 'TMPDIR', value: '/tmp/build' }], { ...policy, sandboxed: false }))?.reason,
    ).toBe('ENV_NOT_ALLOWED');
  });

  it('lets PATH only drop or reorder the person’s own entries', () => {
    expect(checkAgentEnv([{ name: 'PATH', value: '/bin:/usr/bin' }], policy)).toHaveLength(1);
    for (const value of ['/home/u/project/bin:/usr/bin', '/tmp:/usr/bin', '.:/usr/bin', ':/usr/bin', '/opt/x/bin']) {
      expect(reasonOf(() => checkAgentEnv([{ name: 'PATH', value }], policy))?.reason).toBe('ENV_NOT_ALLOWED');
    }
    // Not even one of the person's own entries when it lies in the workspace.
    const inWorkspace = { ...policy, trustedPath: ['/home/u/project/node_modules/.bin', '/usr/bin'] };
    expect(
      reasonOf(() => checkAgentEnv([{ name: 'PATH', value: '/home/u/project/node_modules/.bin' }], inWorkspace))
        ?.reason,
    ).toBe('ENV_NOT_ALLOWED');
  });

  it('refuses a malformed or repeated name as bad params', () => {
    expect(reasonOf(() => checkAgentEnv([{ name: 'A=B', value: '' }], policy))).toEqual({
      reason: 'INVALID_PARAMS',
      field: 'env[0].name',
    });
    expect(
      reasonOf(() =>
        checkAgentEnv(
          [
            { name: 'CI', value: '1' },
            { name: 'CI', value: '2' },
          ],
          policy,
        ),
      ),
    ).toEqual({ reason: 'INVALID_PARAMS', field: 'env[1].name' });
  });
});

describe('a command’s environment', () => {
  it('takes a few of the person’s variables, TERM=dumb and the checked ones; no secrets, no loader', () => {
    const env = commandEnvironment(
      { PATH: '.:/usr/bin::bin:/bin', HOME: '/home/u', LANG: 'C.UTF-8', LD_PRELOAD: '/x.so', API_TOKEN: 's3cret' },
      [{ name: 'CI', value: 'true' }],
    );
    expect(env).toEqual({ PATH: '/usr/bin:/bin', TERM: 'dumb', HOME: '/home/u', LANG: 'C.UTF-8', CI: 'true' });
  });

  it('falls back to the system PATH when the person’s has no absolute entry', () => {
    expect(trustedPathEntries('.:bin')).toContain('/usr/bin');
    expect(trustedPathEntries(undefined)).toContain('/bin');
  });
});
