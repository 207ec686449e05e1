import { AgentCard, type SecurityScheme } from '@a2a-js/sdk';
import type { Command } from 'commander';
import { EXTENSION_URI } from '@cleveragents/contract';
import { parsedCard, resolveCard } from '@cleveragents/client/node';
import { ioFor, withClient, type GlobalOptions } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { safeData } from '../safe-text.js';
import type { Style } from '../style.js';
import { withSpinner } from '../terminal.js';

function schemeText(scheme: SecurityScheme | undefined): string {
  const s = scheme?.scheme;
  switch (s?.$case) {
    case 'apiKeySecurityScheme':
      return `API key in ${s.value.location} "${s.value.name}"`;
    case 'httpAuthSecurityScheme':
      return `HTTP ${s.value.scheme}${s.value.bearerFormat ? ` (${s.value.bearerFormat})` : ''}`;
    case 'oauth2SecurityScheme':
      return 'OAuth 2.0';
    case 'openIdConnectSecurityScheme':
      return `OpenID Connect (${s.value.openIdConnectUrl})`;
    case 'mtlsSecurityScheme':
      return 'mutual TLS';
    default:
      return 'unknown scheme';
  }
}

/** A card in words: who, where, how to authenticate, what it can do (its text made safe, one line each). */
export function describeCard(untrusted: AgentCard, style: Style): string {
  const card = safeData(untrusted);
  const lines: string[] = [];
  lines.push(`${style.bold(card.name)} ${style.dim(card.version ? `v${card.version}` : '')}`.trimEnd());
  if (card.description) lines.push(card.description);
  if (card.provider?.organization) {
    lines.push(style.dim(`by ${card.provider.organization} ${card.provider.url}`.trimEnd()));
  }
  lines.push('', style.bold('Interfaces'));
  for (const i of card.supportedInterfaces) {
    lines.push(
      `  ${i.protocolBinding} ${i.protocolVersion ? `v${i.protocolVersion}` : ''} ${i.url}`.replace(/\s+/g, ' '),
    );
  }
  const caps = card.capabilities;
  lines.push('', style.bold('Capabilities'));
  lines.push(
    `  streaming: ${caps?.streaming ? 'yes' : 'no'} · push notifications: ${caps?.pushNotifications ? 'yes' : 'no'} · extended card: ${caps?.extendedAgentCard ? 'yes' : 'no'}`,
  );
  lines.push(
    `  input: ${card.defaultInputModes.join(', ') || '—'} · output: ${card.defaultOutputModes.join(', ') || '—'}`,
  );
  lines.push('', style.bold('Security'));
  const schemes = Object.entries(card.securitySchemes);
  if (schemes.length === 0) lines.push('  none declared');
  for (const [name, scheme] of schemes) lines.push(`  ${name}: ${schemeText(scheme)}`);
  if (card.securityRequirements.length > 0) {
    const alternatives = card.securityRequirements.map((r) => Object.keys(r.schemes).join(' + ') || 'none');
    lines.push(`  required: ${alternatives.join(' or ')}`);
  }
  lines.push('', style.bold('Extensions'));
  const extensions = caps?.extensions ?? [];
  if (extensions.length === 0) lines.push('  none');
  for (const e of extensions) {
    const ours = e.uri === EXTENSION_URI ? style.green(' (CleverAgents commands available)') : '';
    lines.push(`  ${e.uri}${e.required ? ' (required)' : ''}${ours}`);
    if (e.description) lines.push(`    ${style.dim(e.description)}`);
  }
  lines.push('', style.bold(`Skills (${card.skills.length})`));
  for (const skill of card.skills) {
    lines.push(`  ${style.cyan(skill.id)} ${skill.name !== skill.id ? skill.name : ''}`.trimEnd());
    if (skill.description) lines.push(`    ${skill.description}`);
    if (skill.tags.length > 0) lines.push(`    ${style.dim(`tags: ${skill.tags.join(', ')}`)}`);
    for (const example of skill.examples.slice(0, 3)) lines.push(`    ${style.dim(`e.g. "${example}"`)}`);
  }
  return lines.join('\n');
}

export async function card(options: GlobalOptions, _command: Command, url?: string): Promise<number> {
  const io = ioFor(options);
  const show = (resolved: AgentCard): number => {
    const agentCard = parsedCard(resolved);
    io.out.write(
      options.json ? `${JSON.stringify(agentCardJson(agentCard))}\n` : `${describeCard(agentCard, io.outStyle)}\n`,
    );
    return EXIT.OK;
  };
  if (url) {
    return show(
      await withSpinner(io.err, io.errStyle, `Fetching the card of ${url}`, () =>
        resolveCard(url, { legacyCompat: true }),
      ),
    );
  }
  return withClient(options, io, (client) => Promise.resolve(show(client.card)));
}

/** A card in its JSON wire form. */
function agentCardJson(card: AgentCard): unknown {
  return AgentCard.toJSON(card);
}
