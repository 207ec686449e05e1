import { ResourceNotFoundError } from '../common/domain.errors.js';

/** -32001: the namespace holds no approval webhook of that id. */
export function webhookNotFound(namespace: string, id: string): ResourceNotFoundError {
  return new ResourceNotFoundError(
    `Approval webhook not found: ${id} (in namespace ${namespace})`,
    'WEBHOOK_NOT_FOUND',
    { id, namespace },
  );
}
