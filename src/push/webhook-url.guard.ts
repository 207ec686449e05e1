import { lookup } from 'node:dns/promises';
import { Injectable } from '@nestjs/common';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { INPUT_LIMITS } from '../common/input-limits.js';
import { AppConfig } from '../config/app.config.js';
import { embeddedIpv4, formatIp, IpRange, parseIp, type IpAddress } from './ip-range.js';

const ALLOW_LIST_SETTING = 'CLEVERAGENTS_PUSH_ALLOWED_HOSTS';

/** Address classes a webhook may not reach unless the operator admits them (SPEC.md §8). */
const REFUSED_RANGES: readonly { range: IpRange; why: string }[] = [
  ['0.0.0.0/8', 'unspecified'],
  ['127.0.0.0/8', 'loopback'],
  ['10.0.0.0/8', 'private'],
  ['172.16.0.0/12', 'private'],
  ['192.168.0.0/16', 'private'],
  ['100.64.0.0/10', 'private (carrier-grade NAT)'],
  ['169.254.0.0/16', 'link-local (cloud metadata)'],
  ['192.0.0.0/24', 'reserved (IETF protocol assignments)'],
  ['198.18.0.0/15', 'reserved (benchmarking)'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved (incl. broadcast)'],
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['fc00::/7', 'private (unique local)'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'private (site-local)'],
  ['ff00::/8', 'multicast'],
].map(([cidr, why]) => ({ range: IpRange.of(cidr), why }));

/** Host names of cloud instance-metadata services, refused whatever they resolve to. */
const METADATA_HOSTS = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'metadata.azure.com',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.tencentyun.com',
  'metadata.platformequinix.com',
]);

/** A webhook URL that passed the guard, with the addresses it may be delivered to. */
export interface VettedWebhook {
  url: URL;
  /** The host name as written in the URL (brackets stripped from an IPv6 literal). */
  host: string;
  /** Every address the host resolved to, all of them admissible; connect to one of these only. */
  addresses: readonly { address: string; family: 4 | 6 }[];
}

/**
 * Refuses push-notification URLs that would let a client make the server call into its own network
 * (SSRF): loopback, private, link-local, metadata and other non-public addresses, unless the operator
 * admits the host name, the address or a CIDR block containing it in CLEVERAGENTS_PUSH_ALLOWED_HOSTS.
 * Refusals are the SDK's RequestMalformedError, i.e. A2A -32602 invalid params.
 */
@Injectable()
export class WebhookUrlGuard {
  private readonly allowedNames: ReadonlySet<string>;
  private readonly allowedRanges: readonly IpRange[];

  constructor(config: AppConfig) {
    const names = new Set<string>();
    const ranges: IpRange[] = [];
    for (const entry of config.pushAllowedHosts) {
      const range = IpRange.parse(entry);
      if (range) ranges.push(range);
      else names.add(normalizeHostName(entry));
    }
    this.allowedNames = names;
    this.allowedRanges = ranges;
  }

  /** Throws RequestMalformedError (-32602) naming `url` when the webhook URL is not admissible. */
  async assertAllowed(url: string): Promise<void> {
    await this.vet(url);
  }

  /** Checks the URL now (resolving its host) and returns the addresses it may be delivered to. */
  async vet(url: string): Promise<VettedWebhook> {
    if (url.length > INPUT_LIMITS.webhookUrl) {
      throw refusal(`url may be at most ${INPUT_LIMITS.webhookUrl} characters long`);
    }
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw refusal('url must be an absolute http or https URL');
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw refusal(`url must use http or https, not ${parsed.protocol.replace(/:$/, '')}`);
    }
    const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
    const name = normalizeHostName(host);
    const literal = parseIp(host);
    const nameAdmitted = !literal && this.allowedNames.has(name);

    if (!literal && !nameAdmitted && METADATA_HOSTS.has(name)) {
      throw refusal(`url host "${host}" is a cloud metadata service`);
    }

    let resolved: readonly { address: string; family: number }[];
    if (literal) {
      resolved = [{ address: host, family: literal.family }];
    } else {
      try {
        resolved = await this.resolveHost(host);
      } catch {
        throw refusal(`url host "${host}" could not be resolved`);
      }
      if (resolved.length === 0) throw refusal(`url host "${host}" could not be resolved`);
    }

    const addresses = resolved.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }) as const);
    if (nameAdmitted) return { url: parsed, host, addresses };
    for (const { address } of addresses) {
      const ip = parseIp(address);
      const why = ip ? this.refusedBecause(ip) : 'not an IP address';
      if (why) {
        const via = literal ? '' : ` resolves to ${address}, which`;
        throw refusal(`url host "${host}"${via} is not a public address (${why})`);
      }
    }
    return { url: parsed, host, addresses };
  }

  /** Every address the host name resolves to (the system resolver, as the HTTP client would use). */
  protected resolveHost(host: string): Promise<readonly { address: string; family: number }[]> {
    return lookup(host, { all: true, verbatim: true });
  }

  /** Why an address is refused, or undefined when it is public or admitted by the allow-list. */
  private refusedBecause(ip: IpAddress): string | undefined {
    const candidates = [ip, embeddedIpv4(ip)].filter((c): c is IpAddress => c !== undefined);
    if (candidates.some((c) => this.allowedRanges.some((r) => r.contains(c)))) return undefined;
    for (const candidate of candidates) {
      const hit = REFUSED_RANGES.find((r) => r.range.contains(candidate));
      if (hit) return candidate === ip ? hit.why : `${hit.why} (${formatIp(candidate)} embedded in IPv6)`;
    }
    return undefined;
  }
}

function normalizeHostName(host: string): string {
  return host.trim().toLowerCase().replace(/\.$/, '');
}

function refusal(reason: string): RequestMalformedError {
  return new RequestMalformedError({
    message:
      `Invalid push notification config: ${reason}. Webhooks may not target loopback, private, ` +
      `link-local or metadata addresses unless the operator admits the host in ${ALLOW_LIST_SETTING}.`,
    metadata: { field: 'url', setting: ALLOW_LIST_SETTING },
  });
}
