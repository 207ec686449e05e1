import type { GateRequest } from '@cleveragents/contract';
import type { TurnPolicy } from '../execution/orchestrator/protocol.js';
import type { AutomationProfile } from '../session/session.service.js';

/** The gates a task runs under, and what of its client's request they left out. */
export interface NarrowedPolicy {
  policy: TurnPolicy;
  /** The tools the client let run that the profile lets run anyway or lets a client allow. */
  allowed: string[];
  /** The tools the client let run that its profile does not let a client allow: still asked. */
  refused: string[];
}

/**
 * The gates of a task whose first message carried `request` (`cleveragents/gates`): its profile's, stricter
 * by the tools the client wants asked about (`ask`), looser only by the tools it lets run (`allow`) that the
 * profile lets a client allow (`clientMayAllow`): never beyond the profile (docs/plans.md#gates-a-client-asks-for).
 */
export function narrowedPolicy(
  profile: Pick<AutomationProfile, 'gate' | 'allowedTools' | 'clientMayAllow'>,
  request: GateRequest | undefined,
): NarrowedPolicy {
  const ask = request?.ask ?? [];
  const granted = new Set(profile.allowedTools);
  const allowed: string[] = [];
  const refused: string[] = [];
  for (const tool of request?.allow ?? []) {
    const free = profile.gate === 'autonomous' || granted.has(tool);
    if (free || (profile.gate === 'supervised' && profile.clientMayAllow.includes(tool))) {
      granted.add(tool);
      allowed.push(tool);
    } else refused.push(tool);
  }
  const policy: TurnPolicy = {
    gate: profile.gate,
    allowedTools: profile.gate === 'supervised' ? [...granted].filter((tool) => !ask.includes(tool)) : [],
    ...(ask.length > 0 ? { askedTools: [...ask] } : {}),
  };
  return { policy, allowed, refused };
}
