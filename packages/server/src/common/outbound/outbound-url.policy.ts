import { lookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { embeddedIpv4, formatIp, IpRange, parseIp, type IpAddress } from './ip-range.js';

/** Address classes an outbound call may not reach unless the operator admits them (SSRF). */
const REFUSED_CIDRS: readonly (readonly [cidr: string, why: string])[] = [
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
];
let refusedRanges: readonly { range: IpRange; why: string }[] | undefined;
/**
 * REFUSED_CIDRS parsed, at the first outbound check rather than at start: the first parse of an IPv6
 * literal compiles Node's address pattern (some 10 ms).
 */
const refused = () => (refusedRanges ??= REFUSED_CIDRS.map(([cidr, why]) => ({ range: IpRange.of(cidr), why })));

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

/** A URL that passed the policy, with the addresses a connection to it may use. */
export interface VettedTarget {
  url: URL;
  /** The host name as written in the URL (brackets stripped from an IPv6 literal). */
  host: string;
  /** Every address the host resolved to, all admissible; connect to one of these only. */
  addresses: readonly { address: string; family: 4 | 6 }[];
}

/**
 * Why a URL is refused; each guard words it for its own callers. `message` is for whoever sent the URL;
 * `detail` for the server log, with what the message leaves out (the address an internal name resolves to).
 */
export class OutboundUrlRefusal extends Error {
  override readonly name = 'OutboundUrlRefusal';

  constructor(
    message: string,
    readonly detail: string = message,
  ) {
    super(message);
  }
}

export type ResolveHost = (host: string) => Promise<readonly { address: string; family: number }[]>;

/** Every address the host name resolves to (the system resolver, as the HTTP client would use). */
export const systemResolver: ResolveHost = (host) => lookup(host, { all: true, verbatim: true });

export interface OutboundUrlPolicyOptions {
  /** Admit any host whose every address is public (webhooks); otherwise only the listed entries. */
  publicHosts: boolean;
  resolve?: ResolveHost;
}

/** `any`: every port of the host; else the listed ports only. */
type Ports = 'any' | ReadonlySet<number>;

/**
 * The one SSRF policy of the server (webhooks, model endpoints). Entries: a host name (`llm.internal`),
 * an address or CIDR block (`10.0.0.0/8`), either with `:port` to admit that port only, or `*` for any
 * public host. A host admitted by name is trusted whatever it resolves to (the operator's decision);
 * an address must be in an admitted block, or public when public hosts are admitted. Metadata names
 * and non-public addresses are refused unless an entry admits them.
 */
export class OutboundUrlPolicy {
  private readonly names = new Map<string, Ports>();
  private readonly ranges: { range: IpRange; ports: Ports }[] = [];
  private readonly publicHosts: boolean;
  private readonly resolve: ResolveHost;

  constructor(entries: Iterable<string>, options: OutboundUrlPolicyOptions) {
    this.publicHosts = options.publicHosts;
    this.resolve = options.resolve ?? systemResolver;
    for (const raw of entries) {
      const entry = raw.trim();
      if (entry === '') continue;
      if (entry === '*') {
        this.publicHosts = true;
        continue;
      }
      const { host, port } = splitPort(entry);
      const ports: Ports = port === undefined ? 'any' : new Set([port]);
      const range = IpRange.parse(host);
      if (range) this.ranges.push({ range, ports });
      else this.names.set(normalizeHostName(host), mergePorts(this.names.get(normalizeHostName(host)), ports));
    }
  }

  /**
   * Checks `url` and returns the addresses a connection may use. `pin: false` (a definition being
   * saved) skips resolving a host admitted by name, which may live on a network only the server sees.
   */
  async vet(url: string, { pin }: { pin: boolean } = { pin: true }): Promise<VettedTarget> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new OutboundUrlRefusal('url must be an absolute http or https URL');
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw new OutboundUrlRefusal(`url must use http or https, not ${parsed.protocol.replace(/:$/, '')}`);
    }
    const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
    const port = Number(parsed.port || (parsed.protocol === 'https:' ? 443 : 80));
    const literal = parseIp(host);
    const nameAdmitted = !literal && admits(this.names.get(normalizeHostName(host)), port);
    if (!literal && !nameAdmitted && METADATA_HOSTS.has(normalizeHostName(host))) {
      throw new OutboundUrlRefusal(`url host "${host}" is a cloud metadata service`);
    }
    if (nameAdmitted && !pin) return { url: parsed, host, addresses: [] };
    // Nothing but listed names can admit it: refuse without a lookup (no probing of internal names).
    if (!literal && !nameAdmitted && !this.publicHosts && this.ranges.length === 0) {
      throw new OutboundUrlRefusal(`url host "${host}" is not an admitted host`);
    }

    let resolved: readonly { address: string; family: number }[];
    if (literal) {
      resolved = [{ address: host, family: literal.family }];
    } else {
      try {
        resolved = await this.resolve(host);
      } catch {
        resolved = [];
      }
      if (resolved.length === 0) {
        const detail = `url host "${host}" could not be resolved`;
        throw new OutboundUrlRefusal(nameAdmitted ? detail : nameRefused(host), detail);
      }
    }
    const addresses = resolved.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }) as const);
    if (nameAdmitted) return { url: parsed, host, addresses };
    for (const { address } of addresses) {
      const why = this.refusedBecause(address, port);
      if (!why) continue;
      if (literal) throw new OutboundUrlRefusal(`url host "${host}" ${why}`);
      throw new OutboundUrlRefusal(nameRefused(host), `url host "${host}" resolves to ${address}, which ${why}`);
    }
    return { url: parsed, host, addresses };
  }

  /** Why a connection to this address and port is refused, or undefined when it is admitted. */
  private refusedBecause(address: string, port: number): string | undefined {
    const ip = parseIp(address);
    if (!ip) return 'is not an IP address';
    const candidates = [ip, embeddedIpv4(ip)].filter((c): c is IpAddress => c !== undefined);
    if (candidates.some((c) => this.ranges.some((r) => r.range.contains(c) && admits(r.ports, port)))) {
      return undefined;
    }
    const nonPublic = nonPublicClass(ip, candidates);
    if (!this.publicHosts) return `is not an admitted host${nonPublic ? ` (${nonPublic})` : ''}`;
    return nonPublic ? `is not a public address (${nonPublic})` : undefined;
  }
}

/**
 * A name refused after it was resolved, or that does not resolve: one answer for both, without the
 * address, so a caller learns neither where an internal name points nor whether it exists.
 */
function nameRefused(host: string): string {
  return `url host "${host}" does not resolve to an admitted address`;
}

/** A lookup that answers with the vetted addresses only: the connection cannot re-resolve the name. */
export function pinnedLookup(target: VettedTarget): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) {
      callback(
        null,
        target.addresses.map(({ address, family }) => ({ address, family })),
      );
    } else callback(null, target.addresses[0].address, target.addresses[0].family);
  };
}

/** The non-public class of an address (or of the IPv4 it embeds), or undefined when it is public. */
function nonPublicClass(ip: IpAddress, candidates: readonly IpAddress[]): string | undefined {
  for (const candidate of candidates) {
    const hit = refused().find((r) => r.range.contains(candidate));
    if (hit) return candidate === ip ? hit.why : `${hit.why} (${formatIp(candidate)} embedded in IPv6)`;
  }
  return undefined;
}

/** `host:port`, `[v6]:port` or a bare entry (a name, an address, a CIDR block). */
function splitPort(entry: string): { host: string; port?: number } {
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(entry);
  if (bracketed) return { host: bracketed[1], port: bracketed[2] ? Number(bracketed[2]) : undefined };
  const withPort = /^([^:/]+):(\d{1,5})$/.exec(entry);
  if (withPort) return { host: withPort[1], port: Number(withPort[2]) };
  return { host: entry };
}

function mergePorts(current: Ports | undefined, added: Ports): Ports {
  if (current === undefined) return added;
  if (current === 'any' || added === 'any') return 'any';
  return new Set([...current, ...added]);
}

function admits(ports: Ports | undefined, port: number): boolean {
  return ports !== undefined && (ports === 'any' || ports.has(port));
}

export function normalizeHostName(host: string): string {
  return host.trim().toLowerCase().replace(/\.$/, '');
}
