/**
 * The DataSource the TypeORM CLI loads (`npm run migration:*`, from dist/). It reads the same
 * environment as the server: DATABASE_URL, else the embedded database in CLEVERAGENTS_DATA_DIR, which
 * it can open only while no server uses that directory (the lock file says who does).
 */
import 'reflect-metadata';
import { AppConfig } from './config/app.config.js';
import { createDataSource } from './database/data-source.factory.js';
import { ENTITIES } from './entities.js';

const config = AppConfig.fromEnv(process.env);
export const dataSource = await createDataSource(config, {
  entities: ENTITIES,
  purpose: `migration command (${process.argv.slice(2, 3).join(' ') || 'typeorm'})`,
  logging: ['error', 'warn', 'migration', 'schema'],
});
