import { describe, expect, it } from '@jest/globals';
import { AgentCard } from '@a2a-js/sdk';
import { declaresExtension, jsonRpcUrl } from './card.js';

/*
 * The exported card helpers take the SDK's parsed card or a card's raw JSON, as a plain-JS caller fetches it:
 * a field the raw card leaves out is read as empty, never as a TypeError.
 */

const RAW = {
  name: 'agent',
  supportedInterfaces: [
    { url: 'http://h/t/acme/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: 'acme' },
    { url: 'http://h/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
    { url: 'http://h/v03', protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
  ],
  capabilities: { streaming: true, extensions: [{ uri: 'urn:cleveragents:extensions:v1' }] },
};

describe('card helpers on parsed and raw cards', () => {
  it('jsonRpcUrl picks the v1.0 interface without a tenant, from raw JSON and from the parsed card', () => {
    expect(jsonRpcUrl(RAW)).toBe('http://h/a2a');
    expect(jsonRpcUrl(AgentCard.fromJSON(RAW))).toBe('http://h/a2a');
  });

  it('a raw card without interfaces, or an interface without a binding, has no JSON-RPC URL', () => {
    expect(jsonRpcUrl({})).toBeUndefined();
    expect(jsonRpcUrl({ supportedInterfaces: [{ url: 'http://h/x' }] })).toBeUndefined();
  });

  it('declaresExtension reads the extension list, absent or present', () => {
    expect(declaresExtension(RAW)).toBe(true);
    expect(declaresExtension(AgentCard.fromJSON(RAW))).toBe(true);
    expect(declaresExtension({ capabilities: {} })).toBe(false);
    expect(declaresExtension({})).toBe(false);
    expect(declaresExtension(undefined)).toBe(false);
    expect(declaresExtension({ capabilities: { extensions: [{ uri: 'urn:other' }] } })).toBe(false);
  });
});
