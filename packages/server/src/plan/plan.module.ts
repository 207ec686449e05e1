import { Module, type DynamicModule } from '@nestjs/common';
import { ExecutionModule } from '../execution/execution.module.js';
import { PlanStoreModule } from '../plan-store/plan-store.module.js';
import { ReplicaModule } from '../replica/replica.module.js';
import { SessionModule } from '../session/session.module.js';
import { TurnModule } from '../turn/turn.module.js';
import { PlanRpc } from './plan.rpc.js';
import { PlanRuns } from './plan-runs.js';

/**
 * `_cleveragents/plan/*` (docs/protocol.md §6.5): the plans' records (src/plan-store/) and their runs. `taskControl`
 * provides TaskControl (the transport's module, handed in by the composition root).
 */
@Module({})
export class PlanModule {
  static forRoot(options: { taskControl: DynamicModule }): DynamicModule {
    return {
      module: PlanModule,
      imports: [ExecutionModule, SessionModule, PlanStoreModule, TurnModule, ReplicaModule, options.taskControl],
      providers: [PlanRuns, PlanRpc],
      exports: [PlanRuns],
    };
  }
}
