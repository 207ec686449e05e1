import { Module, type DynamicModule } from '@nestjs/common';
import { HealthController } from './health.controller.js';

/** /healthz and /readyz; `diagnostics` is the module whose report they answer from. */
@Module({})
export class HealthModule {
  static forRoot(options: { diagnostics: DynamicModule }): DynamicModule {
    return { module: HealthModule, imports: [options.diagnostics], controllers: [HealthController] };
  }
}
