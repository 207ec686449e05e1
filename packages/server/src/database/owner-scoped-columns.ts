import { PrimaryColumn } from 'typeorm';

/** The (namespace, owner) scope that leads the key of every row one owner holds in one namespace. */
abstract class OwnerScope {
  @PrimaryColumn({ type: 'text' })
  namespace: string;

  @PrimaryColumn({ type: 'text' })
  owner: string;
}

/** The key of a row an owner scope holds by its own id (tasks, sessions, plans); "C" collation: bytewise order. */
export abstract class OwnerScopedColumns extends OwnerScope {
  @PrimaryColumn({ type: 'text', collation: 'C' })
  id: string;
}

/** The key, or the start of it, of a row of one task of an owner scope (task events, push configs, task runs). */
export abstract class TaskScopedColumns extends OwnerScope {
  @PrimaryColumn({ name: 'task_id', type: 'text', collation: 'C' })
  taskId: string;
}
