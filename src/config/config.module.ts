import { Global, Module, type DynamicModule } from '@nestjs/common';
import { AppConfig } from './app.config.js';

@Global()
@Module({})
export class ConfigModule {
  /** Provides the one AppConfig of the process; tests pass their own. */
  static forRoot(config: AppConfig): DynamicModule {
    return { module: ConfigModule, providers: [{ provide: AppConfig, useValue: config }], exports: [AppConfig] };
  }
}
