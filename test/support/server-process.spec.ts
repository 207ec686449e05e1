import { describe, expect, it } from '@jest/globals';
import { startProcess } from './server-process.js';

/*
 * startProcess waits for /readyz or for the process to end. A server ended by a signal has no exit
 * code (exitCode stays null, signalCode is set): the harness must see that as an end at once, not
 * wait out its minute for a readiness that cannot come.
 */
describe('startProcess', () => {
  it('a server killed by a signal at start is reported at once, naming the signal', async () => {
    // The process kills itself before the server module loads.
    const suicide = `--import=data:text/javascript,process.kill(process.pid,'SIGKILL')`;
    await expect(startProcess({ NODE_OPTIONS: suicide })).rejects.toThrow(/server exited at start \(SIGKILL\)/);
  }, 90000);
});
