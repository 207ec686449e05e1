import { expect } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { Writable } from 'node:stream';
import xterm from '@xterm/headless';
import { styleFor } from '../../packages/cli/src/style.js';
/*
 * What the client's in-process unit tests share: streams that keep what is written, an Io of two of them,
 * the rows a terminal shows for some bytes, and the words a shell reads from a line.
 */
/** A stream that keeps what is written to it, as text; a terminal or a pipe as `isTTY` says. */
export class TextSink extends Writable {
    isTTY;
    text = '';
    constructor(isTTY) {
        super();
        this.isTTY = isTTY;
    }
    _write(chunk, _encoding, done) {
        this.text += chunk.toString('utf8');
        done();
    }
}
/** An Io over two sinks (stdout, stderr), uncoloured, with no environment. */
export function sinkIo(tty) {
    const out = new TextSink(tty.out);
    const err = new TextSink(tty.err);
    const style = styleFor({ isTTY: false }, {});
    const io = {
        out: out,
        err: err,
        env: {},
        outStyle: style,
        errStyle: style,
    };
    return { io, out, err };
}
/** The rows a person reads (scrollback, then the screen) on a `columns` × `rows` terminal given `bytes`. */
export async function terminalRows(bytes, columns, rows) {
    const terminal = new xterm.Terminal({
        cols: columns,
        rows,
        scrollback: 1000,
        convertEol: true,
        allowProposedApi: true,
    });
    await new Promise((resolve) => terminal.write(bytes, resolve));
    const buffer = terminal.buffer.active;
    const lines = [];
    for (let i = 0; i < buffer.length; i++)
        lines.push(buffer.getLine(i)?.translateToString(true) ?? '');
    while (lines.at(-1) === '')
        lines.pop();
    terminal.dispose();
    return lines;
}
/** The words a POSIX shell reads from `line`, as the person who copies it would run it. */
export function shellWords(line) {
    const run = spawnSync('sh', ['-c', `set -- ${line}; printf '%s\\0' "$@"`], { encoding: 'utf8' });
    expect(run.status).toBe(0);
    return run.stdout.split('\0').slice(0, -1);
}
//# sourceMappingURL=cli-unit.js.map