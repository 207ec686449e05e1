import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** A literal IP address, parsed by ipaddr.js. */
export interface IpAddress {
  family: 4 | 6;
  address: ipaddr.IPv4 | ipaddr.IPv6;
}

/** The literal without IPv6 brackets or zone id, if Node's own parser takes it as an IP address. */
function literalOf(text: string): string | undefined {
  const literal = text.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
  // Node's parser, not ipaddr.js's: ipaddr.js also reads legacy IPv4 forms (`127.1`, `0x7f.0.0.1`),
  // which a URL host never means as an address here (they go to DNS and are judged by what it answers).
  return isIP(literal) === 0 ? undefined : literal;
}

/** Parses a literal IPv4 or IPv6 address (an IPv6 zone id is ignored); undefined if it is not one. */
export function parseIp(text: string): IpAddress | undefined {
  const literal = literalOf(text);
  if (literal === undefined) return undefined;
  const address = ipaddr.parse(literal);
  return { family: address.kind() === 'ipv4' ? 4 : 6, address };
}

/** Renders an address back in its usual text form (IPv6 uncompressed). */
export function formatIp(ip: IpAddress): string {
  return ip.address.kind() === 'ipv6' ? (ip.address as ipaddr.IPv6).toNormalizedString() : ip.address.toString();
}

/** A CIDR block such as `10.0.0.0/8` or `fc00::/7`. */
export class IpRange {
  private constructor(
    readonly family: 4 | 6,
    private readonly block: [ipaddr.IPv4 | ipaddr.IPv6, number],
  ) {}

  /** Parses `address/prefix` (or a bare address, as a /32 or /128); undefined if malformed. */
  static parse(text: string): IpRange | undefined {
    const parts = text.trim().split('/');
    if (parts.length > 2) return undefined;
    const ip = parseIp(parts[0]);
    if (!ip) return undefined;
    const bits = ip.family === 4 ? 32 : 128;
    const prefixText = parts.at(1); // undefined for a bare address
    if (prefixText !== undefined && !/^\d+$/.test(prefixText)) return undefined;
    const prefixLength = prefixText === undefined ? bits : Number(prefixText);
    if (prefixLength > bits) return undefined;
    return new IpRange(ip.family, [ip.address, prefixLength]);
  }

  static of(text: string): IpRange {
    const range = IpRange.parse(text);
    if (!range) throw new Error(`Not a CIDR block: ${text}`);
    return range;
  }

  contains(ip: IpAddress): boolean {
    // ipaddr.js throws on a match across families: an IPv4 address is never in an IPv6 block.
    return ip.family === this.family && ip.address.match(this.block);
  }
}

/**
 * An IPv4 address carried inside an IPv6 one (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible
 * `::a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`), so that it is judged as the IPv4 it reaches.
 */
export function embeddedIpv4(ip: IpAddress): IpAddress | undefined {
  if (ip.family !== 6) return undefined;
  const parts = (ip.address as ipaddr.IPv6).parts;
  const v4 = (high: number, low: number): IpAddress => ({
    family: 4,
    address: new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]),
  });
  const { mapped, nat64, compatible, sixToFour } = carriers();
  if (mapped.contains(ip) || nat64.contains(ip)) return v4(parts[6], parts[7]);
  // `::` and `::1` are IPv6's own unspecified and loopback addresses, not IPv4 ones.
  if (compatible.contains(ip) && !(parts[6] === 0 && parts[7] <= 1)) return v4(parts[6], parts[7]);
  if (sixToFour.contains(ip)) return v4(parts[1], parts[2]);
  return undefined;
}

let carrierRanges: Record<'mapped' | 'nat64' | 'compatible' | 'sixToFour', IpRange> | undefined;
/** Parsed at first use, not at start: the first parse of an IPv6 literal compiles Node's address pattern. */
const carriers = () =>
  (carrierRanges ??= {
    mapped: IpRange.of('::ffff:0:0/96'),
    nat64: IpRange.of('64:ff9b::/96'),
    compatible: IpRange.of('::/96'),
    sixToFour: IpRange.of('2002::/16'),
  });
