import { describe, expect, it } from '@jest/globals';
import { inputSchemaProblem } from './tool-input-schema.js';
import { offeredTools } from '../execution/orchestrator/client-tools.js';

describe('a tool inputSchema is compiled as JSON Schema when registered', () => {
  it.each([
    [
      { type: 'object', properties: { q: { type: 'strin' } } },
      /^inputSchema\.properties\.q\.type must be equal to one of the allowed values \("array", "boolean"/,
    ],
    [{ type: 'object', required: 'q' }, /^inputSchema\.required must be array$/],
    [{ type: 'object', properties: [] }, /^inputSchema\.properties must be object$/],
    [
      { type: 'object', properties: { q: { $ref: '#/$defs/missing' } } },
      /^inputSchema does not compile: can't resolve reference #\/\$defs\/missing/,
    ],
    [
      { type: 'object', properties: { q: { type: 'string', pattern: '([' } } },
      /^inputSchema does not compile: .*[Rr]egular expression/,
    ],
    [
      { type: 'object', properties: { q: { anyOf: [{ type: 'string' }, { minimum: 'one' }] } } },
      /^inputSchema\.properties\.q\.anyOf\[1\]\.minimum must be number$/,
    ],
    [
      { $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' },
      /^inputSchema\.\$schema must name JSON Schema draft 2020-12, 2019-09 or draft-07$/,
    ],
    [{ type: 'string' }, /^inputSchema must have "type": "object"/],
    [[], /^inputSchema is not an object$/],
  ])('refuses %j, naming where: %s', (schema, problem) => {
    expect(inputSchemaProblem(schema)).toMatch(problem);
  });

  it.each([
    [{ type: 'object' }],
    [{ type: 'object', properties: { path: { type: 'string', description: 'a file' } }, required: ['path'] }],
    [{ type: 'object', properties: { q: { $ref: '#/$defs/q' } }, $defs: { q: { type: 'string' } } }],
    [
      {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        properties: { xs: { type: 'array', prefixItems: [{ type: 'string' }] } },
      },
    ],
    [{ $schema: 'https://json-schema.org/draft/2019-09/schema', type: 'object', unevaluatedProperties: false }],
    [{ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', additionalProperties: false }],
    // Keywords JSON Schema does not define are the tool's own business: models ignore them.
    [{ type: 'object', 'x-order': ['a'], properties: { a: { type: 'string', examples: ['x'] } } }],
  ])('accepts %j', (schema) => {
    expect(inputSchemaProblem(schema)).toBeUndefined();
  });

  it('accepts the built-in client tools, and the same schema twice (nothing of a compiled one is kept)', () => {
    const tools = offeredTools({ fs: { read: true, write: true }, terminal: true });
    expect(tools.length).toBeGreaterThan(5);
    for (const tool of tools) expect([tool.name, inputSchemaProblem(tool.inputSchema)]).toEqual([tool.name, undefined]);
    const withId = { $id: 'https://tools.example/search', type: 'object' };
    expect(inputSchemaProblem(withId)).toBeUndefined();
    expect(inputSchemaProblem({ ...withId })).toBeUndefined();
  });
});
