import pc from 'picocolors';

/**
 * Colours and terminal niceties, decided once per stream: on only for a TTY, off with NO_COLOR (any
 * value) or TERM=dumb, forced on with FORCE_COLOR. Non-TTY output has no colours and no spinners.
 */
export interface Style {
  readonly tty: boolean;
  readonly color: boolean;
  bold(s: string): string;
  dim(s: string): string;
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  cyan(s: string): string;
  magenta(s: string): string;
}

export function colorWanted(stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '0') return true;
  if (env.TERM === 'dumb') return false;
  return stream.isTTY === true;
}

export function styleFor(stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv = process.env): Style {
  const color = colorWanted(stream, env);
  const c = pc.createColors(color);
  return {
    tty: stream.isTTY === true,
    color,
    bold: c.bold,
    dim: c.dim,
    red: c.red,
    green: c.green,
    yellow: c.yellow,
    cyan: c.cyan,
    magenta: c.magenta,
  };
}
