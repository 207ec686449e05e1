import { Global, Module } from '@nestjs/common';
import { TaskControl } from '../turn/task-control.js';
import { A2aModule } from './a2a.module.js';
import { HandlerTaskControl } from './handler-task-control.js';

/**
 * Provides src/turn's TaskControl port, over the A2A request handler, to every module (`plan/execute`
 * and `plan/cancel`): global because the domain modules that need it cannot import the transport.
 */
@Global()
@Module({
  imports: [A2aModule],
  providers: [{ provide: TaskControl, useClass: HandlerTaskControl }],
  exports: [TaskControl],
})
export class TaskControlModule {}
