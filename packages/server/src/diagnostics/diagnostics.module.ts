import { Module } from '@nestjs/common';
import { DiagnosticsRpc } from './diagnostics.rpc.js';
import { DiagnosticsService } from './diagnostics.service.js';

@Module({ providers: [DiagnosticsService, DiagnosticsRpc], exports: [DiagnosticsService] })
export class DiagnosticsModule {}
