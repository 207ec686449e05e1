import { Global, Module, type DynamicModule, type Provider } from '@nestjs/common';
import { Clock, SystemClock } from '../common/clock.js';
import { AppConfig } from './app.config.js';

@Global()
@Module({})
export class ConfigModule {
  /**
   * Provides the one AppConfig of the process and the Clock its budgets and waits run by: the machine's
   * clock, unless a test passes its own (one it moves on at will) with its configuration.
   */
  static forRoot(config: AppConfig, clock?: Clock): DynamicModule {
    const time: Provider = clock ? { provide: Clock, useValue: clock } : { provide: Clock, useClass: SystemClock };
    return {
      module: ConfigModule,
      providers: [{ provide: AppConfig, useValue: config }, time],
      exports: [AppConfig, Clock],
    };
  }
}
