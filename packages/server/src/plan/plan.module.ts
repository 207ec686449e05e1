import { Module } from '@nestjs/common';
import { PlanStoreModule } from '../plan-store/plan-store.module.js';
import { ReplicaModule } from '../replica/replica.module.js';
import { SessionModule } from '../session/session.module.js';
import { TurnModule } from '../turn/turn.module.js';
import { PlanRpc } from './plan.rpc.js';
import { PlanRuns } from './plan-runs.js';

/** `_cleveragents/plan/*` (docs/protocol.md §6.5): the plans' records (src/plan-store/) and their runs. */
@Module({
  imports: [SessionModule, PlanStoreModule, TurnModule, ReplicaModule],
  providers: [PlanRuns, PlanRpc],
  exports: [PlanRuns],
})
export class PlanModule {}
