import { Global, Inject, Logger, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { SecretBox } from '../common/secret-box.js';
import { AppConfig } from '../config/app.config.js';
import { EmbeddedDataSource } from './data-source.factory.js';
import { DatabaseHealth } from './database.health.js';
import { DatabaseRetryMetrics } from './database-retry.metrics.js';
import { DatabaseNotifications } from './database-notifications.js';
import { openDatabase } from './database.startup.js';
import { createSecretBox } from './secret-key.provider.js';
import { TypeOrmPushNotificationStore } from './typeorm-push-notification.store.js';
import { TaskEventLog } from './task-event-log.js';
import { TypeOrmTaskStore } from './typeorm-task.store.js';
import type { EntityClass } from './entity-class.js';

/**
 * The server's one DataSource (PostgreSQL, or the embedded PGlite), migrated or checked at boot as
 * docs/protocol.md §9 says, and the SDK stores on it. Global: inject `DataSource`, `TypeOrmTaskStore`, `TaskEventLog`,
 * `TypeOrmPushNotificationStore`, `DatabaseHealth`, `DatabaseNotifications` (LISTEN/NOTIFY) or `SecretBox` (seals stored secrets) anywhere.
 * Being global, it is initialised before and shut down after every other module, so their shutdown
 * hooks can still write.
 */
@Global()
@Module({})
export class DatabaseModule implements OnApplicationShutdown {
  private readonly logger = new Logger(DatabaseModule.name);

  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

  /** `entities`: every table of the server (src/entities.ts gathers them from the folders that own them). */
  static forRoot(options: { entities: readonly EntityClass[] }): DynamicModule {
    return {
      module: DatabaseModule,
      providers: [
        {
          provide: DataSource,
          inject: [AppConfig],
          useFactory: (config: AppConfig) =>
            openDatabase(config, new Logger(DatabaseModule.name), { entities: options.entities }),
        },
        TypeOrmTaskStore,
        TaskEventLog,
        {
          provide: SecretBox,
          inject: [AppConfig],
          useFactory: (config: AppConfig) => createSecretBox(config, new Logger(DatabaseModule.name)),
        },
        TypeOrmPushNotificationStore,
        DatabaseNotifications,
        DatabaseHealth,
        DatabaseRetryMetrics,
      ],
      exports: [
        DataSource,
        TypeOrmTaskStore,
        TaskEventLog,
        TypeOrmPushNotificationStore,
        DatabaseHealth,
        DatabaseNotifications,
        SecretBox,
      ],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    try {
      // The embedded one always closes: PGlite and the directory lock outlive a failed initialise.
      if (this.dataSource.isInitialized || this.dataSource instanceof EmbeddedDataSource) {
        await this.dataSource.destroy();
      }
    } catch (error) {
      this.logger.error('Closing the database failed', error as Error);
    }
  }
}
