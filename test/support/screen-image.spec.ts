import { afterAll, describe, expect, it } from '@jest/globals';
import xterm from '@xterm/headless';
import { describeNeeding } from './requirements.js';
import { chromium, paletteColor, ScreenCamera, screenHtml } from './screen-image.js';

async function screenOf(data: string, cols = 40, rows = 4): Promise<InstanceType<typeof xterm.Terminal>> {
  const terminal = new xterm.Terminal({ cols, rows, allowProposedApi: true });
  await new Promise<void>((resolve) => terminal.write(data, resolve));
  return terminal;
}

/** A PNG's width and height, from its IHDR chunk. */
function pngSize(png: Buffer): { width: number; height: number } {
  expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  expect(png.subarray(12, 16).toString('latin1')).toBe('IHDR');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

describe('screen-image: a terminal screen as HTML', () => {
  it('the 256-colour palette: the 16 named colours, the cube and the grey ramp', () => {
    expect([paletteColor(1), paletteColor(16), paletteColor(21), paletteColor(196), paletteColor(231)]).toEqual([
      '#cd3131',
      '#000000',
      '#0000ff',
      '#ff0000',
      '#ffffff',
    ]);
    expect([paletteColor(232), paletteColor(255)]).toEqual(['#080808', '#eeeeee']);
  });

  it("each cell's colour and weight; markup in the text stays text", async () => {
    const terminal = await screenOf(
      'plain \x1b[1;31mbold red\x1b[0m \x1b[38;2;1;2;3mrgb\x1b[0m\r\n<b>&amp;</b> \x1b[7minv\x1b[0m',
    );
    const html = screenHtml(terminal.buffer.active, 40, 0, 2, 'caption <x>');
    expect(html).toContain('<span style="color:#cd3131;font-weight:bold">bold red</span>');
    expect(html).toContain('<span style="color:#010203">rgb</span>');
    expect(html).toContain('&lt;b&gt;&amp;amp;&lt;/b&gt;');
    expect(html).toContain('<span style="color:#1e1e1e;background:#d4d4d4">inv</span>');
    expect(html).toContain('caption &lt;x&gt;');
    expect(html).not.toContain('<b>');
    expect(html.match(/class="row"/g)).toHaveLength(2);
    terminal.dispose();
  });
});

describeNeeding(chromium(), 'screen-image: a screen as a PNG taken by Chromium', () => {
  const camera = new ScreenCamera();
  afterAll(() => camera.close());

  it('a PNG as wide as the columns and as tall as the rows; another screen, another picture', async () => {
    const one = await screenOf('\x1b[32mgreen\x1b[0m text');
    const two = await screenOf('other text');
    const first = await camera.png(screenHtml(one.buffer.active, 40, 0, 4));
    const second = await camera.png(screenHtml(two.buffer.active, 40, 0, 4));
    const size = pngSize(first);
    // 40 columns of a 14 px monospace font (about 8.4 px each) and 4 rows of 1.35 × 14 px, with the padding.
    expect(size.width).toBeGreaterThan(40 * 7);
    expect(size.width).toBeLessThan(40 * 11 + 40);
    expect(size.height).toBeGreaterThan(4 * 17);
    expect(size.height).toBeLessThan(4 * 22 + 40);
    expect(pngSize(second)).toEqual(size);
    expect(first.equals(second)).toBe(false);
    one.dispose();
    two.dispose();
  }, 60000);
});
