import { BusinessRuleViolation, ResourceNotFoundError } from '../common/domain.errors.js';

/** The errors of approvals, each with its reason. */

/** -32001: no approval of that id the caller may see (another's is the same as none). */
export function approvalNotFound(namespace: string, approvalId: string): ResourceNotFoundError {
  return new ResourceNotFoundError(
    `Approval not found: ${approvalId} (in namespace ${namespace})`,
    'APPROVAL_NOT_FOUND',
    { approvalId, namespace },
  );
}

/** -32004: the approval was answered first from another client (or ended unanswered): nothing more runs. */
export function alreadyAnswered(approvalId: string, state: string): BusinessRuleViolation {
  return new BusinessRuleViolation(
    `Approval ${approvalId} is already ${state}: the first answer, from whichever client, is the one that counts`,
    'ALREADY_ANSWERED',
    { approvalId, state },
  );
}
