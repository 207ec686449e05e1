/**
 * The DataSource the TypeORM CLI loads (`npm run migration:*`, from dist/). It reads the same
 * environment as the server: DATABASE_URL, else the embedded database in CLEVERAGENTS_DATA_DIR, which
 * it can open only while no server uses that directory (the lock file says who does).
 */
import 'reflect-metadata';
import { AdvancedConsoleLogger, type LoggerOptions } from 'typeorm';
import { AppConfig } from './config/app.config.js';
import { createDataSource } from './database/data-source.factory.js';
import { ENTITIES } from './entities.js';
import { MIGRATION_VERBOSE_VARIABLE } from './config/unknown-variables.js';

const config = AppConfig.fromEnv(process.env);
// Each migration's name and the errors; every SQL statement only with CLEVERAGENTS_MIGRATION_VERBOSE=1.
const logging: LoggerOptions = ['error', 'warn', 'migration', 'schema'];
const verbose = ['1', 'true'].includes(process.env[MIGRATION_VERBOSE_VARIABLE] ?? '');
export const dataSource = await createDataSource(config, {
  entities: ENTITIES,
  purpose: `migration command (${process.argv.slice(2, 3).join(' ') || 'typeorm'})`,
  logging,
  // An instance: the CLI's own `logging` (every query) does not replace it.
  logger: new AdvancedConsoleLogger(verbose ? [...logging, 'query'] : logging),
});
