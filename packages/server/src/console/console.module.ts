import { Module, type DynamicModule } from '@nestjs/common';
import type { AppConfig } from '../config/app.config.js';
import { ConsoleController } from './console.controller.js';
import { ConsoleFiles } from './console-files.js';

/** The web console's files at /console/ (HTTP only); no route at all when CLEVERAGENTS_CONSOLE=off. */
@Module({})
export class ConsoleModule {
  static forRoot(config: Pick<AppConfig, 'console'>): DynamicModule {
    if (!config.console) return { module: ConsoleModule };
    return { module: ConsoleModule, controllers: [ConsoleController], providers: [ConsoleFiles] };
  }
}
