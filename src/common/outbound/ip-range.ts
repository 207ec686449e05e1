import { isIPv4, isIPv6 } from 'node:net';

/** An IP address as a number: 32 bits for IPv4, 128 for IPv6. */
export interface IpAddress {
  family: 4 | 6;
  value: bigint;
}

/** Parses a literal IPv4 or IPv6 address (an IPv6 zone id is ignored); undefined if it is not one. */
export function parseIp(text: string): IpAddress | undefined {
  const literal = text.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
  if (isIPv4(literal)) return { family: 4, value: ipv4Value(literal) };
  if (!isIPv6(literal)) return undefined;
  let groups = literal;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(groups);
  if (dotted) {
    const v4 = ipv4Value(dotted[1]);
    groups = `${groups.slice(0, dotted.index)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head, tail] = groups.includes('::') ? groups.split('::') : [groups, undefined];
  const headParts = head ? head.split(':') : [];
  const tailParts = tail ? tail.split(':') : [];
  const missing = 8 - headParts.length - tailParts.length;
  const parts = tail === undefined ? headParts : [...headParts, ...Array<string>(missing).fill('0'), ...tailParts];
  let value = 0n;
  for (const part of parts) value = (value << 16n) | BigInt(parseInt(part, 16));
  return { family: 6, value };
}

function ipv4Value(dotted: string): bigint {
  return dotted.split('.').reduce((acc, octet) => (acc << 8n) | BigInt(Number(octet)), 0n);
}

/** Renders an address back in its usual text form (IPv6 uncompressed). */
export function formatIp(ip: IpAddress): string {
  if (ip.family === 4) return [24n, 16n, 8n, 0n].map((shift) => String((ip.value >> shift) & 0xffn)).join('.');
  const groups: string[] = [];
  for (let shift = 112n; shift >= 0n; shift -= 16n) groups.push(((ip.value >> shift) & 0xffffn).toString(16));
  return groups.join(':');
}

/** A CIDR block such as `10.0.0.0/8` or `fc00::/7`. */
export class IpRange {
  private constructor(
    readonly family: 4 | 6,
    private readonly network: bigint,
    private readonly prefixLength: number,
  ) {}

  /** Parses `address/prefix` (or a bare address, as a /32 or /128); undefined if malformed. */
  static parse(text: string): IpRange | undefined {
    const [addressText, prefixText, ...rest] = text.trim().split('/');
    if (rest.length > 0) return undefined;
    const ip = parseIp(addressText);
    if (!ip) return undefined;
    const bits = ip.family === 4 ? 32 : 128;
    const prefixLength = prefixText === undefined ? bits : Number(prefixText);
    if (!/^\d+$/.test(prefixText ?? String(bits)) || prefixLength > bits) return undefined;
    return new IpRange(ip.family, ip.value & IpRange.mask(bits, prefixLength), prefixLength);
  }

  static of(text: string): IpRange {
    const range = IpRange.parse(text);
    if (!range) throw new Error(`Not a CIDR block: ${text}`);
    return range;
  }

  contains(ip: IpAddress): boolean {
    if (ip.family !== this.family) return false;
    const bits = this.family === 4 ? 32 : 128;
    return (ip.value & IpRange.mask(bits, this.prefixLength)) === this.network;
  }

  private static mask(bits: number, prefixLength: number): bigint {
    const all = (1n << BigInt(bits)) - 1n;
    return (all >> BigInt(bits - prefixLength)) << BigInt(bits - prefixLength);
  }
}

/**
 * An IPv4 address carried inside an IPv6 one (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible
 * `::a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`), so that it is judged as the IPv4 it reaches.
 */
export function embeddedIpv4(ip: IpAddress): IpAddress | undefined {
  if (ip.family !== 6) return undefined;
  const low32 = ip.value & 0xffffffffn;
  if (MAPPED.contains(ip) || NAT64.contains(ip)) return { family: 4, value: low32 };
  if (COMPATIBLE.contains(ip) && ip.value > 1n) return { family: 4, value: low32 };
  if (SIX_TO_FOUR.contains(ip)) return { family: 4, value: (ip.value >> 80n) & 0xffffffffn };
  return undefined;
}

const MAPPED = IpRange.of('::ffff:0:0/96');
const NAT64 = IpRange.of('64:ff9b::/96');
const COMPATIBLE = IpRange.of('::/96');
const SIX_TO_FOUR = IpRange.of('2002::/16');
