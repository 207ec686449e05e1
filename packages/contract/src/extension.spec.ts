import { describe, expect, it } from '@jest/globals';
import { answerExtension, servedExtensionVersions } from './extension.js';

const uri = (version: string) => `urn:cleveragents:extensions:${version}`;

describe('the extension rule of versions', () => {
  it('serves the current minor and the one prior minor of its major', () => {
    expect(servedExtensionVersions('1.0')).toEqual(['1.0']);
    expect(servedExtensionVersions('1.3')).toEqual(['1.3', '1.2']);
  });

  it.each([
    ['v1', '1.3', { version: '1.3', uri: uri('v1') }],
    ['v1.3', '1.3', { version: '1.3', uri: uri('v1.3') }],
    ['v1.2', '1.3', { version: '1.2', uri: uri('v1.2') }],
    ['v1.4', '1.3', { version: '1.3', uri: uri('v1.3') }],
    ['v1.10', '1.3', { version: '1.3', uri: uri('v1.3') }],
    ['v1.0', '1.0', { version: '1.0', uri: uri('v1.0') }],
    ['v1.1', '1.0', { version: '1.0', uri: uri('v1.0') }],
  ])('%s on a server at %s is served, the response naming the version served', (asked, current, served) => {
    expect(answerExtension(uri(asked), current)).toEqual({ kind: 'served', ...served });
  });

  it.each([
    ['v1.1', '1.3', 'a minor older than the prior one'],
    ['v2', '1.3', 'another major'],
    ['v0.9', '1.0', 'another major'],
    ['v2.0', '1.0', 'another major'],
    ['v1.x', '1.0', 'malformed'],
    ['1.0', '1.0', 'malformed'],
    ['v1.0.0', '1.0', 'malformed'],
    ['', '1.0', 'malformed'],
  ])('%s on a server at %s is refused (%s)', (asked, current) => {
    expect(answerExtension(uri(asked), current)).toEqual({ kind: 'refused' });
  });

  it('another extension is left alone', () => {
    expect(answerExtension('https://example.com/ext/v1', '1.0')).toEqual({ kind: 'other' });
  });
});
