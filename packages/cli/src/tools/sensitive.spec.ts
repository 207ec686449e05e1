import { describe, expect, it } from '@jest/globals';
import { clientConfigDir, runsCodeOf, secretKindOf } from './sensitive.js';

const env = { HOME: '/home/u', XDG_CONFIG_HOME: undefined };

describe('secretKindOf', () => {
  it.each([
    ['/home/u/.ssh/id_rsa', 'SSH'],
    ['/home/u/.ssh/known_hosts', 'SSH'],
    ['/home/u/.gnupg/private-keys-v1.d/x.key', 'GnuPG'],
    ['/srv/p/keys/id_ecdsa', 'an SSH private key'],
    ['/srv/p/id_ed25519-cert.pub', 'an SSH certificate'],
    ['/srv/p/id_dsa', 'an SSH private key'],
    ['/srv/p/tls/server.pem', 'PEM'],
    ['/srv/p/tls/server.KEY', 'private key'],
    ['/srv/p/a.p12', 'PKCS#12'],
    ['/srv/p/a.pfx', 'PKCS#12'],
    ['/home/u/.aws/credentials', 'AWS'],
    ['/home/u/.aws/config', 'AWS'],
    ['/home/u/.config/gcloud/application_default_credentials.json', 'Google Cloud'],
    ['/home/u/.azure/msal_token_cache.json', 'Azure'],
    ['/home/u/.kube/config', 'Kubernetes'],
    ['/home/u/.docker/config.json', 'Docker'],
    ['/srv/p/.netrc', '.netrc'],
    ['/srv/p/.git-credentials', 'Git credentials'],
    ['/srv/p/.npmrc', 'npm'],
    ['/srv/p/.pypirc', 'PyPI'],
    ['/home/u/.pgpass', 'PostgreSQL'],
    ['/srv/p/.env', 'environment file'],
    ['/srv/p/.env.local', 'environment file'],
    ['/home/u/.config/cleveragents/credentials.json', 'cleveragents'],
  ])('%s is a secret (%s)', (path, kind) => {
    expect(secretKindOf(path, env)).toContain(kind);
  });

  it.each([
    '/srv/p/.env.example',
    '/srv/p/.env.sample',
    '/srv/p/.env.template',
    '/srv/p/src/key.ts',
    '/srv/p/README.md',
    '/srv/p/.pem',
    '/home/u/.sshrc-notes',
    '/home/u/.config/cleveragents-other/x',
    '/home/u/.kube/cache/x',
  ])('%s is not', (path) => {
    expect(secretKindOf(path, env)).toBeUndefined();
  });

  it('finds the client config folder under $XDG_CONFIG_HOME when it is absolute', () => {
    const xdg = { HOME: '/home/u', XDG_CONFIG_HOME: '/cfg' };
    expect(clientConfigDir(xdg)).toBe('/cfg/cleveragents');
    expect(secretKindOf('/cfg/cleveragents/credentials.json', xdg)).toContain('cleveragents');
    expect(clientConfigDir({ HOME: '/home/u', XDG_CONFIG_HOME: 'relative' })).toBe('/home/u/.config/cleveragents');
  });
});

describe('runsCodeOf', () => {
  it.each([
    '.git/config',
    '.git/hooks/pre-commit',
    'vendor/x/.git/config',
    'sub/.git',
    '.gitmodules',
    '.envrc',
    'web/.envrc',
    '.husky/pre-commit',
    '.vscode/tasks.json',
    '.vscode/settings.json',
    '.vscode/launch.json',
    'app.code-workspace',
    '.devcontainer/devcontainer.json',
    '.devcontainer.json',
    '.idea/workspace.xml',
  ])('%s runs code later', (rel) => {
    expect(runsCodeOf(`/srv/p/${rel}`, rel, env)).toEqual(expect.any(String));
  });

  it.each(['src/a.ts', '.vscode/extensions.json', 'docs/git/config', '.gitignore', 'package.json'])(
    '%s does not',
    (rel) => {
      expect(runsCodeOf(`/srv/p/${rel}`, rel, env)).toBeUndefined();
    },
  );

  it('home startup files and the client config run code, judged by the real path', () => {
    expect(runsCodeOf('/home/u/.bashrc', '.bashrc', env)).toContain('shell');
    expect(runsCodeOf('/home/u/.ssh/authorized_keys', '.ssh/authorized_keys', env)).toContain('SSH');
    expect(runsCodeOf('/home/u/.config/cleveragents/credentials.json', 'x', env)).toContain('cleveragents');
    expect(runsCodeOf('/srv/p/.bashrc', '.bashrc', env)).toBeUndefined();
  });
});
