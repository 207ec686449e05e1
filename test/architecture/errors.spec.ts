import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { domainErrorClasses, inlineDomainErrors, sourceFiles } from './error-rules.js';

/** The server package: its folders are the server's design (src/, migrations/). */
const ROOT = fileURLToPath(new URL('../../packages/server', import.meta.url));

describe('architecture: each domain declares its errors once, in its *.errors.ts', () => {
  const classes = domainErrorClasses(ROOT);

  it('knows the domain error classes', () => {
    expect([...classes]).toEqual(
      expect.arrayContaining(['ResourceNotFoundError', 'ValidationError', 'BusinessRuleViolation', 'PlanError']),
    );
  });

  it('no domain error with a reason literal is built outside a *.errors.ts file', () => {
    const inline = sourceFiles(ROOT).flatMap((file) =>
      inlineDomainErrors(file, readFileSync(join(ROOT, file), 'utf8'), classes),
    );
    expect(inline.map((e) => `${e.file}:${e.line} new ${e.error}(… '${e.reason}' …)`)).toEqual([]);
  });

  describe('the rule bites', () => {
    const inline = "throw new PlanError(`Plan ${id} cannot run`, 'NO_ORCHESTRATOR', { planId: id });";

    it('an inline construction in a service', () => {
      expect(inlineDomainErrors('src/plan-store/plan.service.ts', inline, classes)).toEqual([
        { file: 'src/plan-store/plan.service.ts', line: 1, error: 'PlanError', reason: 'NO_ORCHESTRATOR' },
      ]);
    });

    it('a ValidationError with a reason as its second argument', () => {
      const code = "throw new ValidationError([{ field: 'cursor', description: 'ahead' }], 'CURSOR_AHEAD');";
      expect(inlineDomainErrors('src/sync/sync.service.ts', code, classes).map((e) => e.reason)).toEqual([
        'CURSOR_AHEAD',
      ]);
    });

    it('the same construction in the domain errors file is its declaration', () => {
      expect(inlineDomainErrors('src/plan-store/plan.errors.ts', inline, classes)).toEqual([]);
    });

    it('an error that carries no reason literal (its class names its reason) is not one', () => {
      const code = "throw new ValidationError([{ field: 'namespace', description: 'a slug' }]);";
      expect(inlineDomainErrors('src/rpc/rpc-role.guard.ts', code, classes)).toEqual([]);
    });
  });
});
