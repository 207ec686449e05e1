import { describe, expect, it } from '@jest/globals';
import { asError } from './as-error.js';

describe('asError', () => {
  it('returns an Error as it is', () => {
    const err = new RangeError('out of range');
    expect(asError(err)).toBe(err);
  });

  it('takes a thrown string as the message', () => {
    expect(asError('boom').message).toBe('boom');
  });

  it('shows what an object holds, not [object Object]', () => {
    expect(asError({ code: 'E_DENIED', status: 403 }).message).toBe("{ code: 'E_DENIED', status: 403 }");
  });
});
