import { describe, expect, it } from '@jest/globals';
import { embeddedIpv4, formatIp, IpRange, parseIp } from './ip-range.js';

describe('parseIp', () => {
  it.each([
    ['127.0.0.1', 4, '127.0.0.1'],
    ['::1', 6, '0:0:0:0:0:0:0:1'],
    ['::', 6, '0:0:0:0:0:0:0:0'],
    ['[fe80::1%eth0]', 6, 'fe80:0:0:0:0:0:0:1'],
    ['::ffff:10.0.0.1', 6, '0:0:0:0:0:ffff:a00:1'],
    ['2001:db8::1', 6, '2001:db8:0:0:0:0:0:1'],
  ])('%s', (text, family, formatted) => {
    const ip = parseIp(text)!;
    expect(ip.family).toBe(family);
    expect(formatIp(ip)).toBe(formatted);
  });

  // Legacy IPv4 forms are host names here: DNS says where they go, and that answer is judged.
  it.each(['localhost', '256.0.0.1', '1.2.3', '127.1', '0x7f.0.0.1', '::g', ''])('rejects %j', (text) => {
    expect(parseIp(text)).toBeUndefined();
  });

  it('formats back', () => {
    expect(formatIp(parseIp('10.1.2.3')!)).toBe('10.1.2.3');
    expect(formatIp(parseIp('fd00::1')!)).toBe('fd00:0:0:0:0:0:0:1');
  });
});

describe('IpRange', () => {
  it('contains the addresses of its block only', () => {
    const range = IpRange.of('172.16.0.0/12');
    expect(range.contains(parseIp('172.16.0.0')!)).toBe(true);
    expect(range.contains(parseIp('172.31.255.255')!)).toBe(true);
    expect(range.contains(parseIp('172.32.0.0')!)).toBe(false);
    expect(range.contains(parseIp('::ffff:172.16.0.1')!)).toBe(false);
  });

  it('treats a bare address as a single-address block', () => {
    expect(IpRange.of('::1').contains(parseIp('::1')!)).toBe(true);
    expect(IpRange.of('::1').contains(parseIp('::2')!)).toBe(false);
  });

  it.each(['10.0.0.0/33', '10.0.0.0/x', '10.0.0.0/8/1', 'example.com/8', 'fc00::/129'])('rejects %j', (text) => {
    expect(IpRange.parse(text)).toBeUndefined();
  });
});

describe('embeddedIpv4', () => {
  it.each([
    ['::ffff:127.0.0.1', '127.0.0.1'],
    ['64:ff9b::a9fe:a9fe', '169.254.169.254'],
    ['::10.0.0.1', '10.0.0.1'],
    ['2002:c0a8:101::1', '192.168.1.1'],
  ])('%s carries %s', (v6, v4) => {
    expect(formatIp(embeddedIpv4(parseIp(v6)!)!)).toBe(v4);
  });

  it.each(['::1', '::', '2606:2800:220:1::1', '10.0.0.1'])('%s carries none', (text) => {
    expect(embeddedIpv4(parseIp(text)!)).toBeUndefined();
  });
});
