import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { A2A_REASONS, isReason, REASONS } from '../../packages/contract/src/reasons.js';
import { domainErrorClasses, reasonsRaised, sourceFiles } from '../architecture/error-rules.js';

/** The reasons docs/errors.md names in its tables, as `REASON` in a table cell. */
function documentedReasons(page: string): Set<string> {
  const found = new Set<string>();
  for (const line of page.split('\n')) {
    if (!line.startsWith('|')) continue;
    for (const match of line.matchAll(/`([A-Z][A-Z0-9_]+)`/g)) found.add(match[1]);
  }
  return found;
}

describe('error reasons: the contract lists them, docs/errors.md explains them', () => {
  const page = readFileSync('docs/errors.md', 'utf8');
  const documented = documentedReasons(page);

  it('lists each reason once', () => {
    expect(new Set(REASONS).size).toBe(REASONS.length);
    expect(new Set(A2A_REASONS).size).toBe(A2A_REASONS.length);
  });

  it('every cleveragents reason is in a table of docs/errors.md', () => {
    expect(REASONS.filter((reason) => !documented.has(reason))).toEqual([]);
  });

  it('every A2A reason the standard methods answer with is in a table of docs/errors.md', () => {
    expect(A2A_REASONS.filter((reason) => !documented.has(reason))).toEqual([]);
  });

  // The server package, whose src/ raises the reasons.
  const server = join(process.cwd(), 'packages/server');
  const classes = domainErrorClasses(server);
  const raisedBy = (files: string[]) =>
    [
      ...new Set(files.flatMap((file) => reasonsRaised(file, readFileSync(join(server, file), 'utf8'), classes))),
    ].sort();

  it('every reason a *.errors.ts file declares is in a table of docs/errors.md', () => {
    const declared = raisedBy(sourceFiles(server).filter((file) => file.endsWith('.errors.ts')));
    expect(declared.length).toBeGreaterThan(30);
    expect(declared.filter((reason) => !documented.has(reason))).toEqual([]);
  });

  it('every reason thrown or answered anywhere in src is in a table of docs/errors.md', () => {
    const raised = raisedBy(sourceFiles(server));
    expect(raised).toEqual(expect.arrayContaining(['PARSE_ERROR', 'METHOD_NOT_FOUND', 'DATABASE_UNAVAILABLE']));
    expect(raised.filter((reason) => !documented.has(reason))).toEqual([]);
  });

  it('the context, plan and session reasons are in its tables', () => {
    const wanted = REASONS.filter((r) => r === 'ACTOR_BACKEND_UNAVAILABLE' || /^(PLAN|SESSION)_/.test(r));
    expect(wanted.length).toBeGreaterThanOrEqual(8);
    expect(wanted.filter((reason) => !documented.has(reason))).toEqual([]);
  });

  it('the raised-reasons check bites: a declared reason the page does not name is reported', () => {
    const code = "export const x = () => new PlanError('m', 'PLAN_UNDOCUMENTED', {});";
    const raised = reasonsRaised('src/plan-store/plan.errors.ts', code, classes);
    expect(raised).toEqual(['PLAN_UNDOCUMENTED']);
    expect(raised.filter((reason) => !documented.has(reason))).toEqual(['PLAN_UNDOCUMENTED']);
  });

  it('the check bites: a reason the page does not name is reported', () => {
    expect(documentedReasons('| `PLAN_ERROR` | a plan |\n`NOT_IN_A_TABLE`').has('NOT_IN_A_TABLE')).toBe(false);
    expect(documented.has('NOT_A_REASON_ANYWHERE')).toBe(false);
  });

  it('isReason knows the list and nothing else', () => {
    expect(isReason('PLAN_NOT_FOUND')).toBe(true);
    expect(isReason('TASK_NOT_FOUND')).toBe(false);
    expect(isReason('plan_not_found')).toBe(false);
  });
});
