import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { RegistryModule } from '../registry/registry.module.js';
import { SessionModule } from '../session/session.module.js';
import { PlanRepository } from './plan.repository.js';
import { PlanService } from './plan.service.js';
import { TaskPlans } from './task-plans.js';

/**
 * Plans as records (docs/protocol.md §6.5): the `plans` table, its states and transitions, PlanService's changes
 * and TaskPlans, as the plan methods (src/plan/) and the turns that run plans (src/turn/) read and move them.
 */
@Module({
  imports: [AuditModule, RegistryModule, SessionModule],
  providers: [PlanRepository, PlanService, TaskPlans],
  exports: [PlanRepository, PlanService, TaskPlans],
})
export class PlanStoreModule {}
