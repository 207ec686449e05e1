import { createHash } from 'node:crypto';
import { cpSync, existsSync, readdirSync, readFileSync, renameSync, rmSync, rmdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Node built-ins only: this runs before the application's modules load (see embedded-opening.ts).

/** The prepared data directory's folder inside the build (dist/embedded-template); see templateLocation(). */
export const TEMPLATE_FOLDER = 'embedded-template';
const MANIFEST = 'manifest.json';

/** What a template records: the schema it holds, as schemaDigest() computed it when it was made. */
export interface TemplateManifest {
  digest: string;
  pglite: string;
  migrations: string[];
}

/**
 * The migrations folder as seen from this file. Compiled, this file is dist/database/*.js and the
 * migrations dist/migrations/*.js; under ts-jest it is src/database/*.ts and they are migrations/*.ts.
 */
export function migrationsLocation(): { dir: string; extension: '.js' | '.ts' } {
  const here = fileURLToPath(import.meta.url);
  return here.endsWith('.js')
    ? { dir: join(dirname(here), '..', 'migrations'), extension: '.js' }
    : { dir: join(dirname(here), '..', '..', 'migrations'), extension: '.ts' };
}

/** The migration files, sorted (their names start with their timestamps). */
export function migrationFiles(): string[] {
  const { dir, extension } = migrationsLocation();
  return readdirSync(dir)
    .filter((name) => name.endsWith(extension) && !name.endsWith(`.d${extension}`) && !/\.(spec|e2e-spec)\./.test(name))
    .sort();
}

function pgliteVersion(): string {
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  const manifest = join(dirname(entry), '..', 'package.json');
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}

/**
 * The schema a fresh embedded database gets: PGlite's version and every migration file's name and
 * content. A template made under another digest is never used.
 */
export function schemaDigest(): TemplateManifest {
  const { dir } = migrationsLocation();
  const migrations = migrationFiles();
  const hash = createHash('sha256');
  const pglite = pgliteVersion();
  hash.update(`pglite ${pglite}\n`);
  for (const file of migrations) {
    hash
      .update(`${file}\n`)
      .update(readFileSync(join(dir, file)))
      .update('\n');
  }
  return { digest: hash.digest('hex'), pglite, migrations };
}

/** Where the build keeps the template: dist/embedded-template compiled; none under ts-jest (src/). */
export function templateLocation(): string | undefined {
  const here = fileURLToPath(import.meta.url);
  return here.endsWith('.js') ? join(dirname(here), '..', TEMPLATE_FOLDER) : undefined;
}

/** The template's manifest, or undefined when there is none (or it cannot be read). */
export function readManifest(template: string): TemplateManifest | undefined {
  try {
    return JSON.parse(readFileSync(join(template, MANIFEST), 'utf8')) as TemplateManifest;
  } catch {
    return undefined;
  }
}

export function writeManifest(template: string, manifest: TemplateManifest): void {
  writeFileSync(join(template, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
}

/**
 * The template's database folder a fresh PGlite data directory (`pgdata` missing or empty) may start as:
 * only a template made for exactly the schema the migrations produce now; undefined otherwise.
 */
export function templateToSeed(pgdata: string, template = templateLocation()): string | undefined {
  if (!template) return undefined;
  if (existsSync(pgdata) && readdirSync(pgdata).length > 0) return undefined;
  const manifest = readManifest(template);
  if (!manifest || manifest.digest !== schemaDigest().digest) return undefined;
  const source = join(template, 'pglite');
  return existsSync(join(source, 'PG_VERSION')) ? source : undefined;
}

/**
 * Copies a template's database folder (templateToSeed) to `pgdata`. The copy goes to a sibling folder
 * first and is renamed into place, so a start interrupted midway leaves no half-copied database behind.
 * The caller holds the data directory's lock.
 */
export function copyTemplate(source: string, pgdata: string): void {
  // One name, not one per process: the lock makes this the only seeder, and a copy a killed start left is removed.
  const staging = `${pgdata}.seeding`;
  rmSync(staging, { recursive: true, force: true });
  try {
    cpSync(source, staging, { recursive: true });
    if (existsSync(pgdata)) rmdirSync(pgdata);
    renameSync(staging, pgdata);
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    throw error;
  }
}

/**
 * Seeds a fresh PGlite data directory with a copy of the template's when it suits (templateToSeed);
 * returns whether it did. The caller holds the data directory's lock.
 */
export function seedFromTemplate(pgdata: string, template = templateLocation()): boolean {
  const source = templateToSeed(pgdata, template);
  if (source) copyTemplate(source, pgdata);
  return source !== undefined;
}
