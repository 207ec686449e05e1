import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { terminalRows } from './cli-unit.js';
/*
 * An ink app on a headless terminal, in process: a TTY of a given size that keeps every byte written (the
 * rows a person reads come from a headless xterm), and a keyboard the test types on.
 */
/** The screen: a TTY `columns` × `rows` that keeps all it is given; resizable. */
export class HeadlessScreen extends Writable {
    columns;
    rows;
    isTTY = true;
    chunks = [];
    constructor(columns, rows) {
        super();
        this.columns = columns;
        this.rows = rows;
    }
    _write(chunk, _encoding, done) {
        this.chunks.push(Buffer.from(chunk));
        done();
    }
    /** Everything written, as text (escape sequences included). */
    get bytes() {
        return Buffer.concat(this.chunks).toString('utf8');
    }
    resize(columns, rows) {
        this.columns = columns;
        this.rows = rows;
        this.emit('resize');
    }
    /** The rows a person reads: the scrollback, then the screen. */
    seen() {
        return terminalRows(Buffer.concat(this.chunks), this.columns, this.rows);
    }
}
/** A keyboard: what the test types arrives as a terminal in raw mode sends it. */
export class Keyboard extends EventEmitter {
    isTTY = true;
    data = null;
    raw = false;
    type(keys) {
        this.data = keys;
        this.emit('readable');
        this.emit('data', keys);
    }
    read = () => {
        const { data } = this;
        this.data = null;
        return data;
    };
    setRawMode(raw) {
        this.raw = raw;
        return this;
    }
    setEncoding() {
        return this;
    }
    resume() {
        return this;
    }
    pause() {
        return this;
    }
    ref() {
        return this;
    }
    unref() {
        return this;
    }
}
/** Lets ink's renders (throttled, on timers) and React's effects happen. */
export function settle(ms = 60) {
    return new Promise((resolve) => setTimeout(resolve, ms));
}
/** Renders `tree` with ink on a headless terminal `columns` × `rows`. */
export async function inkTerminal(tree, columns = 80, rows = 24) {
    const { render } = await import('ink');
    const screen = new HeadlessScreen(columns, rows);
    const keys = new Keyboard();
    const instance = render(tree, {
        stdout: screen,
        stderr: screen,
        stdin: keys,
        interactive: true,
        exitOnCtrlC: false,
        patchConsole: false,
        maxFps: 1000,
        kittyKeyboard: { mode: 'disabled' },
    });
    await settle();
    return {
        screen,
        keys,
        async type(typed) {
            keys.type(typed);
            await settle();
        },
        async seen() {
            await settle();
            return screen.seen();
        },
        unmount: () => {
            instance.unmount();
            instance.cleanup();
        },
    };
}
//# sourceMappingURL=ink-terminal.js.map