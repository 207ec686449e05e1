import { describe, expect, it } from '@jest/globals';
import { paramsPipe as pipeOf } from '../../../../test/support/params-pipe.js';
import { RegistryRpc } from './registry.rpc.js';

/* The rules of registry params as the handlers' pipes apply them: each one the server has always had. */

const create = pipeOf(RegistryRpc, 'create');
const update = pipeOf(RegistryRpc, 'update');
const list = pipeOf(RegistryRpc, 'list');
const actor = (spec: unknown) => create({ kind: 'actor', name: 'a', spec });
const tool = (spec: object) =>
  create({ kind: 'tool', name: 't', spec: { description: 'd', runsOn: 'server', ...spec } });
const profile = (spec: unknown) => create({ kind: 'profile', name: 'p', spec });
const skill = (spec: object) =>
  create({ kind: 'skill', name: 's', spec: { description: 'd', instructions: 'i', ...spec } });

describe('registry params', () => {
  it('an optional field may be null, taken as absent', () => {
    expect(
      actor({
        graphId: 'g',
        description: null,
        systemPrompt: null,
        profile: null,
        tools: null,
        skills: null,
        model: { model: 'm', provider: null, temperature: null, topP: null, maxTokens: null, baseUrl: null },
      }),
    ).toBe('ok');
    expect(actor({ a2a: { url: 'https://agent.example', auth: { scheme: null, credential: null } } })).toBe('ok');
    expect(tool({ inputSchema: { type: 'object' }, timeoutSeconds: null })).toBe('ok');
    expect(profile({ gate: 'manual', description: null, allowedTools: null, budget: { tokens: null } })).toBe('ok');
    expect(create({ kind: 'skill', name: 's', spec: { description: 'd', instructions: 'i' }, labels: null })).toBe(
      'ok',
    );
    expect(update({ kind: 'skill', name: 's', labels: null })).toBe('ok');
    expect(list({ kind: null, labels: null })).toBe('ok');
    expect(update({ kind: 'skill', name: 's', labels: {}, expectedRevision: null })).toEqual(['expectedRevision']);
  });

  it('an actor runs one of graphId, localGraph and a2a; graphId is checked only when neither other is given', () => {
    expect(actor({ description: 'none' })).toEqual(['spec.graphId']);
    expect(actor({ graphId: '' })).toEqual(['spec.graphId']);
    expect(actor({ localGraph: null })).toBe('ok');
    expect(actor({ graphId: 'g', localGraph: 'orchestrator' })).toEqual(['spec.localGraph']);
    expect(actor({ graphId: 'g', localGraph: 'elsewhere' })).toEqual(['spec.localGraph']);
    expect(actor({ localGraph: 'orchestrator', a2a: { url: 'https://agent.example' } })).toEqual(['spec.a2a']);
    expect(actor({ graphId: 'g', a2a: { url: 'ftp://agent.example' } })).toEqual(['spec.a2a', 'spec.a2a.url']);
  });

  it('a client tool names its client method, a server tool none', () => {
    expect(tool({ inputSchema: { type: 'object' }, runsOn: 'client' })).toEqual(['spec.clientMethod']);
    expect(tool({ inputSchema: { type: 'object' }, clientMethod: 'fs/read_text_file' })).toEqual(['spec.clientMethod']);
    expect(tool({ inputSchema: { type: 'object' }, runsOn: 'moon', clientMethod: 'fs/read_text_file' })).toEqual([
      'spec.clientMethod',
      'spec.runsOn',
    ]);
    expect(tool({ inputSchema: { type: 'object' }, runsOn: 'client', clientMethod: 'terminal/create' })).toBe('ok');
  });

  it('allowedTools only with the supervised gate; every wrong field named though a number is not whole', () => {
    expect(profile({ gate: 'supervised', allowedTools: [] })).toBe('ok');
    expect(profile({ gate: 'manual', allowedTools: [] })).toEqual(['spec.allowedTools']);
    expect(profile({ gate: 'manual', allowedTools: [], budget: { tokens: 2.5 } })).toEqual([
      'spec.allowedTools',
      'spec.budget.tokens',
    ]);
    expect(profile({ gate: 'manual', budget: { tokens: 1e20, toolCalls: 0 } })).toBe('ok');
  });

  it('a list of names and a label map are named as a whole', () => {
    expect(skill({ tools: ['a', 'a'] })).toEqual(['spec.tools']);
    expect(skill({ tools: [1] })).toEqual(['spec.tools']);
    expect(skill({ tools: Array.from({ length: 101 }, (_, i) => `t${i}`) })).toEqual(['spec.tools']);
    expect(
      create({ kind: 'skill', name: 's', spec: { description: 'd', instructions: 'i' }, labels: { a: 1 } }),
    ).toEqual(['labels']);
  });

  it('counts characters as the server always has, and costUsd to six decimal places', () => {
    expect(skill({ description: '😀'.repeat(2000) })).toBe('ok');
    expect(skill({ description: '😀'.repeat(2001) })).toEqual(['spec.description']);
    expect(profile({ gate: 'manual', budget: { costUsd: 0.123456 } })).toBe('ok');
    expect(profile({ gate: 'manual', budget: { costUsd: 0.1234567 } })).toEqual(['spec.budget.costUsd']);
    expect(profile({ gate: 'manual', budget: { costUsd: 1e-7 } })).toEqual(['spec.budget.costUsd']);
  });

  it("an actor model's price: non-negative finite numbers, at least one, an ISO 4217 currency; each wrong field named", () => {
    const priced = (pricing: unknown) => actor({ localGraph: 'orchestrator', model: { model: 'm', pricing } });
    expect(priced({ inputPerMillionTokens: 2.5, outputPerMillionTokens: 10, currency: 'EUR' })).toBe('ok');
    expect(priced({ inputPerMillionTokens: 0 })).toBe('ok');
    expect(priced({ outputPerMillionTokens: 1, inputPerMillionTokens: null, currency: null })).toBe('ok');
    expect(priced(null)).toBe('ok');
    expect(priced({ inputPerMillionTokens: -1, currency: 'usd' })).toEqual([
      'spec.model.pricing.currency',
      'spec.model.pricing.inputPerMillionTokens',
    ]);
    expect(priced({ outputPerMillionTokens: '3' })).toEqual(['spec.model.pricing.outputPerMillionTokens']);
    expect(priced({ inputPerMillionTokens: 1, currency: 'EURO' })).toEqual(['spec.model.pricing.currency']);
    expect(priced({ currency: 'USD' })).toEqual(['spec.model.pricing.inputPerMillionTokens']);
    expect(priced({ inputPerMillionTokens: 1, perToken: 1 })).toEqual(['spec.model.pricing.perToken']);
    expect(priced('cheap')).toEqual(['spec.model.pricing']);
  });

  it("checks URLs and tool input schemas with the server's own rules", () => {
    expect(actor({ graphId: 'g', model: { model: 'm', baseUrl: 'http://vllm:8000/v1' } })).toBe('ok');
    expect(actor({ graphId: 'g', model: { model: 'm', baseUrl: 'http://my_host:8000/v1' } })).toEqual([
      'spec.model.baseUrl',
    ]);
    expect(tool({ inputSchema: { type: 'object', properties: { q: { type: 'strin' } } } })).toEqual([
      'spec.inputSchema',
    ]);
  });

  it('checks the spec only against a valid kind, and on update only when one is given', () => {
    expect(create({ kind: 'agent', name: 'a', spec: 42 })).toEqual(['kind']);
    expect(create({ kind: 'skill', name: 's', spec: [] })).toEqual(['spec']);
    expect(update({ kind: 'actor', name: 'a', spec: null })).toEqual(['spec']);
    expect(update({ kind: 'actor', name: 'a', labels: {} })).toBe('ok');
  });
});
