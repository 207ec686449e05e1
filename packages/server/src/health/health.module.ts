import { Module } from '@nestjs/common';
import { DiagnosticsModule } from '../diagnostics/diagnostics.module.js';
import { HealthController } from './health.controller.js';

@Module({ imports: [DiagnosticsModule], controllers: [HealthController] })
export class HealthModule {}
