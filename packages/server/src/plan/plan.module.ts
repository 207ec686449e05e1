import { Module } from '@nestjs/common';
import { RegistryModule } from '../registry/registry.module.js';
import { ReplicaModule } from '../replica/replica.module.js';
import { SessionModule } from '../session/session.module.js';
import { TurnModule } from '../turn/turn.module.js';
import { PlanStoreModule } from './store/plan-store.module.js';
import { PlanRpc } from './plan.rpc.js';
import { PlanService } from './plan.service.js';

/** Plans (docs/protocol.md §6.5): drafted, approved, paused, resumed, canceled; their execution comes next. */
@Module({
  imports: [RegistryModule, SessionModule, PlanStoreModule, TurnModule, ReplicaModule],
  providers: [PlanService, PlanRpc],
  exports: [PlanService],
})
export class PlanModule {}
