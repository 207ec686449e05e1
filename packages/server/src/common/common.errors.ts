import { BusinessRuleViolation, ValidationError } from './domain.errors.js';

/** The errors of the rules every domain shares (revisions, paging), each with its reason. */

/** -32004: `expectedRevision` is stale; `what` and `name` say which entity. */
export function revisionConflict(what: string, name: string, current: number, expected: number): BusinessRuleViolation {
  return new BusinessRuleViolation(
    `${what} ${name} is at revision ${current}, not ${expected}; read it again and retry`,
    'REVISION_CONFLICT',
    { expectedRevision: String(expected), currentRevision: String(current) },
  );
}

/** -32602 naming `pageToken`: a token this list did not issue, or whose position it cannot use. */
export function invalidPageToken(): ValidationError {
  return new ValidationError(
    [{ field: 'pageToken', description: 'pageToken is not a token this list issued; pass nextPageToken unchanged' }],
    'INVALID_PAGE_TOKEN',
  );
}

/** -32602 naming `pageSize`: out of 1..`max`. */
export function pageSizeOutOfRange(max: number): ValidationError {
  return new ValidationError([{ field: 'pageSize', description: `pageSize must be between 1 and ${max}` }]);
}
