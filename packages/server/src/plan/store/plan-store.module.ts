import { Module } from '@nestjs/common';
import { PlanRepository } from './plan.repository.js';
import { TaskPlans } from './task-plans.js';

/**
 * The plans store (docs/protocol.md §6.5): the `plans` table, its states and its transitions, as the plan methods
 * (src/plan/) and the turns that run plans (src/turn/) read and move them.
 */
@Module({
  providers: [PlanRepository, TaskPlans],
  exports: [PlanRepository, TaskPlans],
})
export class PlanStoreModule {}
