import { realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { ownCheckout, relationTo } from './own-source.js';

describe('the client’s own source tree', () => {
  it('is the checkout above the client’s code; a client outside any checkout has none', () => {
    const checkout = realpathSync(fileURLToPath(new URL('../../..', import.meta.url)));
    expect(ownCheckout()).toBe(checkout);
    expect(ownCheckout(join(checkout, 'packages', 'cli', 'dist', 'tools.js'))).toBe(checkout);
    expect(
      ownCheckout(join(realpathSync(tmpdir()), 'node_modules', 'cleveragents', 'dist', 'tools.js')),
    ).toBeUndefined();
  });

  it('a workspace is it, lies in it, holds it, or is elsewhere (a shared prefix is not enough)', () => {
    expect(relationTo('/src/cleveragents', '/src/cleveragents')).toBe('is');
    expect(relationTo('/src/cleveragents/packages/server', '/src/cleveragents')).toBe('lies in');
    expect(relationTo('/src', '/src/cleveragents')).toBe('holds');
    expect(relationTo('/src/cleveragents-fork', '/src/cleveragents')).toBeUndefined();
    expect(relationTo('/home/ada/project', '/src/cleveragents')).toBeUndefined();
  });
});
