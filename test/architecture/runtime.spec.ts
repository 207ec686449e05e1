import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import semver from 'semver';
import { engineFloors, runtimeViolations, type RuntimeFiles } from './runtime-rules.js';

/**
 * Packages that declare a newer Node than the project's oldest supported one, with the range they declare,
 * let through there (where CI runs the suite) and nowhere else. None does since the floor is 22.15.
 */
const OVER_DECLARED: Record<string, string> = {};

function read(path: string): string {
  return readFileSync(path, 'utf8');
}

function projectFiles(): RuntimeFiles {
  const pkg = JSON.parse(read('package.json')) as { engines: { node: string } };
  const lock = JSON.parse(read('package-lock.json')) as { packages: RuntimeFiles['lockPackages'] };
  return {
    engines: pkg.engines.node,
    nvmrc: read('.nvmrc'),
    dockerfile: read('Dockerfile'),
    readme: read('README.md'),
    lockPackages: lock.packages,
  };
}

describe('runtime: the Node.js the project declares, builds on and tests on agree', () => {
  it('engines.node, .nvmrc, the Dockerfile, the README and every installed package agree', () => {
    expect(runtimeViolations(projectFiles(), OVER_DECLARED)).toEqual([]);
  });

  it('the Node running this suite is one engines.node declares', () => {
    const { engines } = projectFiles();
    expect({ node: process.version, declared: semver.satisfies(process.version, engines) }).toEqual({
      node: process.version,
      declared: true,
    });
  });

  describe('the rules catch what they are for', () => {
    const good: RuntimeFiles = {
      engines: '^20.19.0 || >=24.11.0',
      nvmrc: '24\n',
      dockerfile: 'FROM node:24-bookworm-slim AS build\nRUN true\nFROM node:24-bookworm-slim\n',
      readme: '## Quick start\n\nOn a fresh machine with Node.js 24.11+ (or 20.19+):\n',
      lockPackages: {
        '': { engines: { node: '^20.19.0 || >=24.11.0' } },
        'node_modules/a': { engines: { node: '>=18' } },
        'node_modules/x/node_modules/b': { engines: { node: '^20.19.0 || ^22.13.0 || >=24.11.0' } },
        'node_modules/old': { engines: ['node >= 0.4'] },
        'node_modules/none': {},
      },
    };

    it('a consistent set passes', () => {
      expect(engineFloors(good.engines)).toEqual(['20.19.0', '24.11.0']);
      expect(runtimeViolations(good, {})).toEqual([]);
    });

    it('an image on another major than .nvmrc', () => {
      const dockerfile = good.dockerfile.replace('FROM node:24-bookworm-slim\n', 'FROM node:20-bookworm-slim\n');
      expect(runtimeViolations({ ...good, dockerfile }, {})).toEqual([
        'Dockerfile FROM node:20-bookworm-slim: not node:24-* (.nvmrc)',
      ]);
    });

    it('.nvmrc outside engines', () => {
      expect(runtimeViolations({ ...good, nvmrc: '22', dockerfile: 'FROM node:22-slim\n' }, {})).toEqual([
        '.nvmrc names Node 22, outside engines.node "^20.19.0 || >=24.11.0"',
      ]);
    });

    it('a README that does not say every floor', () => {
      expect(runtimeViolations({ ...good, readme: 'On a fresh machine with Node.js ≥ 20.19:\n' }, {})).toEqual([
        'README quick start does not say 20.19+ (engines.node)',
        'README quick start does not say 24.11+ (engines.node)',
      ]);
    });

    it('a package that needs a newer Node than engines lets in', () => {
      const lockPackages = { ...good.lockPackages, 'node_modules/@s/t': { engines: { node: '^20.19.0 || >=24.12' } } };
      expect(runtimeViolations({ ...good, lockPackages }, {})).toEqual([
        '@s/t declares node "^20.19.0 || >=24.12", engines.node lets in ">=24.11.0"',
      ]);
    });

    it('engines.node open past what a package declares, even with every floor inside it', () => {
      const lockPackages = {
        ...good.lockPackages,
        'node_modules/typeorm': { engines: { node: '^20.19.0 || >=24.11.0' } },
      };
      expect(
        runtimeViolations({ ...good, engines: '>=20.19', readme: 'On a fresh machine with Node.js 20.19+' }, {}),
      ).toEqual(['b declares node "^20.19.0 || ^22.13.0 || >=24.11.0", engines.node lets in ">=20.19"']);
      expect(
        runtimeViolations(
          {
            ...good,
            engines: '^20.19.0 || >=24',
            readme: 'On a fresh machine with Node.js 24.0+, 20.19+',
            lockPackages,
          },
          {},
        ),
      ).toEqual([
        'b declares node "^20.19.0 || ^22.13.0 || >=24.11.0", engines.node lets in ">=24"',
        'typeorm declares node "^20.19.0 || >=24.11.0", engines.node lets in ">=24"',
      ]);
    });

    it('an over-declaring package is let through on the oldest major only, and only with the range listed', () => {
      const lockPackages = { ...good.lockPackages, 'node_modules/o': { engines: { node: '>=22' } } };
      expect(runtimeViolations({ ...good, lockPackages }, { o: '>=22' })).toEqual([]);
      expect(
        runtimeViolations(
          { ...good, engines: '>=20.19', readme: 'On a fresh machine with Node.js 20.19+', lockPackages },
          { o: '>=22' },
        ),
      ).toEqual([
        'b declares node "^20.19.0 || ^22.13.0 || >=24.11.0", engines.node lets in ">=20.19"',
        'o declares node ">=22", engines.node lets in ">=20.19"',
        'o is listed as over-declaring but needs no excuse any more',
      ]);
      expect(runtimeViolations({ ...good, lockPackages }, { o: '>=21' })).toEqual([
        'o declares node ">=22", engines.node lets in "^20.19.0"',
        'o is listed as over-declaring but needs no excuse any more',
      ]);
      const newer = { ...good.lockPackages, 'node_modules/o': { engines: { node: '>=25' } } };
      expect(runtimeViolations({ ...good, lockPackages: newer }, { o: '>=25' })).toEqual([
        'o declares node ">=25", engines.node lets in ">=24.11.0"',
      ]);
    });

    it('a listed package that no longer over-declares', () => {
      expect(runtimeViolations(good, { a: '>=22' })).toEqual([
        'a is listed as over-declaring but needs no excuse any more',
      ]);
    });
  });
});
