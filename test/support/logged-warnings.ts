import { expect, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';

/** What the server logs as warnings while a test runs (the detail a caller is not shown). */
export function captureWarnings(): { lines: string[]; stop: () => void } {
  const lines: string[] = [];
  const spy = jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => {
    lines.push(typeof message === 'string' ? message : JSON.stringify(message));
  });
  return { lines, stop: () => spy.mockRestore() };
}

/** The correlation id a failure reason names, which the log line with the detail carries too. */
export function correlationIdOf(reason: string): string {
  const id = /correlation id ([0-9a-f-]{36})/.exec(reason)?.[1];
  expect(id).toBeDefined();
  return id!;
}

/**
 * A failure reason with its correlation id blanked out, for asserting what the reason must not say:
 * the id is a random UUID, so a digit run such as "404" or a port can occur in it by chance.
 */
export function withoutCorrelationId(reason: string): string {
  return reason.replace(/correlation id [0-9a-f-]{36}/, 'correlation id <id>');
}
