import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { LoggerService } from '@nestjs/common';
import type { AppConfig } from '../config/app.config.js';
import { createDataSource } from './data-source.factory.js';
import { prepareDatabase } from './database.startup.js';
import { EMBEDDED_PGDATA } from './embedded-opening.js';
import { readManifest, schemaDigest, writeManifest } from './embedded-template.js';

const SILENT: LoggerService = { log: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * Makes the template fresh embedded data directories start from: an embedded data directory migrated
 * by the server's own start-up path (prepareDatabase), with a manifest naming the schema it holds. Kept
 * as it is when its manifest already names today's schema. Built in a sibling folder and renamed into
 * place, so a reader never sees half a template.
 */
export async function writeEmbeddedTemplate(template: string): Promise<'kept' | 'written'> {
  const wanted = schemaDigest();
  if (readManifest(template)?.digest === wanted.digest && existsSync(join(template, EMBEDDED_PGDATA, 'PG_VERSION'))) {
    return 'kept';
  }
  mkdirSync(dirname(template), { recursive: true });
  const work = mkdtempSync(join(dirname(template), `.${basename(template)}-`));
  try {
    const config = { database: { kind: 'embedded', dataDir: work } } as AppConfig;
    const dataSource = await createDataSource(config, { entities: [], purpose: 'embedded template build' });
    try {
      await prepareDatabase(dataSource, { migrateOnStart: true }, SILENT);
    } finally {
      await dataSource.destroy();
    }
    writeManifest(work, wanted);
    rmSync(template, { recursive: true, force: true });
    renameSync(work, template);
  } catch (error) {
    rmSync(work, { recursive: true, force: true });
    throw error;
  }
  return 'written';
}
