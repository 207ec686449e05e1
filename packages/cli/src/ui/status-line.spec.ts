import { describe, expect, it } from '@jest/globals';
import { shortPath, statusText, type StatusInfo } from './status-line.js';

const info: StatusInfo = {
  where: 'agents.example.com',
  session: '01M96XN5YYF2EZREZF7T7CYHMF',
  actor: 'default',
  profile: 'guarded',
  workspace: '/home/me/projects/site',
  sandboxed: true,
  usage: { tokens: 315 },
  budget: { tokens: 10000 },
  allowed: ['fs_write_text_file', '`npm test`'],
};

describe('the status line', () => {
  it('says where, the session, whose, the tokens against the budget, the allowances, the sandbox, the workspace', () => {
    expect(statusText(info, 200)).toBe(
      'agents.example.com · session 7T7CYHMF' +
        ' · actor default · profile guarded · tokens 315/10000 · allowed: fs_write_text_file, `npm test`' +
        ' · sandbox on · /home/me/projects/site',
    );
  });

  it('is one line cut to the width, whatever the server named things', () => {
    const hostile = { ...info, actor: 'a\u001b]52;c;eA==\u0007b\nc', profile: 'p\u202eq' };
    for (const width of [20, 60, 80]) {
      const line = statusText(hostile, width);
      expect([...line].length).toBeLessThanOrEqual(width);
      expect(line).not.toMatch(/[\u0000-\u001f\u202e]/);
    }
    expect(statusText(hostile, 200)).toContain('actor ab c · profile pq');
  });

  it('counts the approvals waiting in other sessions, early in the line, at most 99+', () => {
    expect(statusText({ ...info, waitingElsewhere: 0 }, 200)).not.toContain('waiting');
    expect(statusText({ ...info, waitingElsewhere: 1 }, 200)).toContain(
      'profile guarded · 1 approval waiting elsewhere · tokens',
    );
    expect(statusText({ ...info, waitingElsewhere: 3 }, 200)).toContain('3 approvals waiting elsewhere');
    expect(statusText({ ...info, waitingElsewhere: 5000 }, 200)).toContain('99+ approvals waiting elsewhere');
  });

  it('shortens the workspace: the home folder as ~, a long path cut at its start', () => {
    expect(shortPath('/home/me/projects/site', '/home/me')).toBe('~/projects/site');
    expect(shortPath('/srv/a/very/long/path/to/the/project/folder', '/home/me', 20)).toBe('…/the/project/folder');
  });
});
