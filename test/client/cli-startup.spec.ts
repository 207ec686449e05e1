import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { cliHome, runCli, type CliHome } from '../support/cli.js';
import { assertCliBuilt } from '../support/terminal.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * A fast start: `cleveragents --help` (and a command's --help) loads the argument parser and the
 * contract, nothing of the network stack, the prompts, the spinner or the renderers. Measured by the
 * built CLI itself, under a module-resolution hook that lists every package it loads; the wall time is
 * the benchmark's (bench/cli-startup.mjs).
 */

const HOOKS = `export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  const m = resolved.url.match(/node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//);
  if (m) process.stderr.write('loaded-package ' + m[1] + '\\n');
  return resolved;
}
`;

/** What a fast start must not load: the SDK (and jose under it), prompts, spinner, Markdown, diff, YAML, the server. */
const HEAVY = [
  '@a2a-js/sdk',
  'jose',
  '@inquirer/prompts',
  '@inquirer/core',
  'ora',
  'marked',
  'marked-terminal',
  'diff',
  'yaml',
  '@nestjs/core',
  '@nestjs/common',
];

describe('cleveragents starts fast', () => {
  let home: CliHome;
  let register: string;

  beforeAll(async () => {
    assertCliBuilt();
    home = await cliHome();
    writeFileSync(join(home.dir, 'hooks.mjs'), HOOKS);
    register = join(home.dir, 'register.mjs');
    writeFileSync(
      register,
      `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(join(home.dir, 'hooks.mjs')).href)});\n`,
    );
  });

  afterAll(async () => {
    await ifAssigned(home)?.cleanup();
  });

  async function packagesLoadedBy(args: string[]): Promise<string[]> {
    const run = await runCli(args, { home, env: { NODE_OPTIONS: `--import ${pathToFileURL(register).href}` } });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Usage: cleveragents');
    return [...new Set([...run.stderr.matchAll(/^loaded-package (\S+)$/gm)].map((m) => m[1]))].sort();
  }

  it('--help in server mode loads commander and no heavy package', async () => {
    const loaded = await packagesLoadedBy(['--server', 'http://127.0.0.1:9', '--help']);
    // The hook sees the packages: the check cannot pass by seeing nothing.
    expect(loaded).toContain('commander');
    expect(loaded.filter((name) => HEAVY.includes(name))).toEqual([]);
  });

  it("a command's --help loads no more", async () => {
    for (const args of [
      ['chat', '--help'],
      ['send', '--help'],
      ['plans', 'execute', '--help'],
    ]) {
      const loaded = await packagesLoadedBy(['--server', 'http://127.0.0.1:9', ...args]);
      expect({ args, heavy: loaded.filter((name) => HEAVY.includes(name)) }).toEqual({ args, heavy: [] });
    }
  });
});
