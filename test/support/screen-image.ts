import { existsSync } from 'node:fs';
import type { IBuffer, IBufferCell } from '@xterm/headless';
import type { Requirement } from './requirements.js';

/**
 * A headless terminal's screen as a picture: its cells as HTML (colours, bold, dim, italic, underline,
 * inverse), then a PNG of that page taken by a real Chromium (Debian's `chromium`, driven by
 * playwright-core; nothing is downloaded). The docs' screenshots of the chat are made this way.
 */

/** The xterm palette's first 16 colours (dark background theme). */
const ANSI_16 = [
  '#000000',
  '#cd3131',
  '#0dbc79',
  '#e5e510',
  '#2472c8',
  '#bc3fbc',
  '#11a8cd',
  '#e5e5e5',
  '#666666',
  '#f14c4c',
  '#23d18b',
  '#f5f543',
  '#3b8eea',
  '#d670d6',
  '#29b8db',
  '#ffffff',
];
const FOREGROUND = '#d4d4d4';
const BACKGROUND = '#1e1e1e';

const hex = (n: number): string => `#${n.toString(16).padStart(6, '0')}`;

/** Colour `index` of the 256-colour palette. */
export function paletteColor(index: number): string {
  if (index < 16) return ANSI_16[index];
  if (index < 232) {
    const i = index - 16;
    const level = (v: number): number => (v === 0 ? 0 : 55 + v * 40);
    return hex((level(Math.floor(i / 36)) << 16) | (level(Math.floor(i / 6) % 6) << 8) | level(i % 6));
  }
  const gray = 8 + (index - 232) * 10;
  return hex((gray << 16) | (gray << 8) | gray);
}

function colorOf(cell: IBufferCell, which: 'fg' | 'bg'): string | undefined {
  const isDefault = which === 'fg' ? cell.isFgDefault() : cell.isBgDefault();
  if (isDefault) return undefined;
  const value = which === 'fg' ? cell.getFgColor() : cell.getBgColor();
  const rgb = which === 'fg' ? cell.isFgRGB() : cell.isBgRGB();
  return rgb ? hex(value) : paletteColor(value);
}

const escapeHtml = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The style of one cell as CSS (empty for the default look). */
function cssOf(cell: IBufferCell): string {
  let fg = colorOf(cell, 'fg');
  let bg = colorOf(cell, 'bg');
  if (cell.isInverse()) [fg, bg] = [bg ?? BACKGROUND, fg ?? FOREGROUND];
  const css: string[] = [];
  if (fg) css.push(`color:${fg}`);
  if (bg) css.push(`background:${bg}`);
  if (cell.isBold()) css.push('font-weight:bold');
  if (cell.isDim()) css.push('opacity:0.6');
  if (cell.isItalic()) css.push('font-style:italic');
  if (cell.isUnderline()) css.push('text-decoration:underline');
  return css.join(';');
}

/**
 * Rows `from` to `to` (exclusive) of a terminal buffer as one HTML page, the cells in a monospace grid
 * `cols` wide; a caption above the rows when given.
 */
export function screenHtml(buffer: IBuffer, cols: number, from: number, to: number, caption?: string): string {
  const rows: string[] = [];
  const cell = buffer.getNullCell();
  for (let y = from; y < to; y++) {
    const line = buffer.getLine(y);
    let html = '';
    let run = '';
    let runCss = '';
    const flush = (): void => {
      if (run) html += runCss ? `<span style="${runCss}">${escapeHtml(run)}</span>` : escapeHtml(run);
      run = '';
    };
    for (let x = 0; x < cols && line; x++) {
      line.getCell(x, cell);
      // The second half of a wide character has width 0: the first half drew it.
      if (cell.getWidth() === 0) continue;
      const css = cssOf(cell);
      if (css !== runCss) {
        flush();
        runCss = css;
      }
      run += cell.getChars() || ' ';
    }
    flush();
    rows.push(`<div class="row">${html || ' '}</div>`);
  }
  const title = caption ? `<div class="caption">${escapeHtml(caption)}</div>` : '';
  return `<!doctype html><html><head><meta charset="utf-8"><style>
body{margin:0;background:${BACKGROUND}}
.screen{display:inline-block;padding:12px 14px;background:${BACKGROUND};color:${FOREGROUND};
font:14px/1.35 'DejaVu Sans Mono',monospace;white-space:pre}
.caption{font:12px sans-serif;color:#9a9a9a;margin-bottom:8px}
.row{height:1.35em}
</style></head><body><div class="screen" id="screen">${title}${rows.join('')}</div></body></html>`;
}

/** Where Chromium is: CHROMIUM_PATH, else Debian's package. */
export function chromiumPath(): string | undefined {
  const candidates = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'];
  return candidates.find((path): path is string => !!path && existsSync(path));
}

/** A Chromium to take screenshots with; CI (.ci/run installs Debian's package) requires it. */
export function chromium(): Requirement {
  return {
    what: 'Chromium (Debian package chromium, or CHROMIUM_PATH)',
    missing: chromiumPath() ? undefined : 'no /usr/bin/chromium (apt-get install chromium) and no CHROMIUM_PATH',
    required: process.env.CLEVERAGENTS_TEST_REQUIRE_CHROMIUM === '1',
  };
}

/** Renders pages to PNG files in one Chromium, started on first use; `close` ends it. */
export class ScreenCamera {
  private browser?: import('playwright-core').Browser;

  async png(html: string): Promise<Buffer> {
    if (!this.browser) {
      const { chromium: launcher } = await import('playwright-core');
      const executablePath = chromiumPath();
      if (!executablePath) throw new Error('no Chromium: apt-get install chromium, or set CHROMIUM_PATH');
      this.browser = await launcher.launch({ executablePath, args: ['--no-sandbox'] });
    }
    const page = await this.browser.newPage({ deviceScaleFactor: 1 });
    try {
      await page.setContent(html);
      return await page.locator('#screen').screenshot({ type: 'png' });
    } finally {
      await page.close();
    }
  }

  async close(): Promise<void> {
    await this.browser?.close();
    this.browser = undefined;
  }
}
