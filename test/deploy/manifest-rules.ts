/**
 * Reading the deployment files without running them: docker-compose.yml, the Helm chart under
 * deploy/helm/cleveragents and the Dockerfile. Neither Docker nor Helm runs on the machine the project is
 * developed on, so these helpers parse the text: Compose's `${VAR:-default}` interpolation, and the
 * chart's env entries, whose variable names the templates keep literal.
 */

/** Every `CLEVERAGENTS_*` / `OIDC_*` name a text mentions: keys, interpolations, comments alike. */
export function variableMentions(text: string): string[] {
  return [...new Set(text.match(/\b(?:CLEVERAGENTS|OIDC)_[A-Z0-9_]*[A-Z0-9]\b/g) ?? [])].sort();
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length];
}

/** The names the server does not know, each with the closest one it does: `X (closest: Y)`. */
export function unknownVariables(names: Iterable<string>, known: ReadonlySet<string>): string[] {
  const unknown: string[] = [];
  for (const name of names) {
    if (known.has(name)) continue;
    const closest = [...known].sort((a, b) => editDistance(name, a) - editDistance(name, b) || a.localeCompare(b))[0];
    unknown.push(`${name} (closest: ${closest})`);
  }
  return unknown.sort();
}

/** A Compose service's `environment`, in either of its forms (a map, or a list of `KEY=value`). */
export function composeEnvironment(service: unknown): Record<string, string> {
  const environment = (service as { environment?: unknown } | undefined)?.environment;
  if (environment === undefined || environment === null) return {};
  if (Array.isArray(environment)) {
    return Object.fromEntries(
      environment.map((entry) => {
        const text = String(entry);
        const eq = text.indexOf('=');
        return eq < 0 ? [text, ''] : [text.slice(0, eq), text.slice(eq + 1)];
      }),
    );
  }
  return Object.fromEntries(
    Object.entries(environment as Record<string, unknown>).map(([key, value]) => [
      key,
      value === null ? '' : String(value as string | number | boolean),
    ]),
  );
}

/** The names a Compose text interpolates: `${NAME}`, `${NAME:-default}`, `${NAME-default}`, `$NAME`. */
export function interpolatedNames(text: string): string[] {
  const names = new Set<string>();
  for (const match of text.replaceAll('$$', '').matchAll(/\$\{?([A-Za-z_][A-Za-z0-9_]*)/g)) names.add(match[1]);
  return [...names].sort();
}

/**
 * Compose's interpolation of one value against the variables of `.env` (and the shell): `${X:-d}` is d
 * when X is unset or empty, `${X-d}` when unset, `${X}` and `$X` are X or empty; `$$` is a literal `$`.
 */
export function interpolate(value: string, vars: Readonly<Record<string, string | undefined>>): string {
  return value.replace(
    /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?)-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g,
    (
      whole,
      braced: string | undefined,
      colon: string | undefined,
      fallback: string | undefined,
      bare: string | undefined,
    ) => {
      if (whole === '$$') return '$';
      const name = braced ?? bare!;
      const current = vars[name];
      if (fallback === undefined) return current ?? '';
      if (current === undefined || (colon === ':' && current === '')) return fallback;
      return current;
    },
  );
}

/** One env entry of a template: a literal value, a `.Values` path, a Secret reference, or something else. */
export type TemplateEnvValue =
  | { kind: 'literal'; value: string }
  | { kind: 'values'; path: string }
  | { kind: 'secret'; key: string }
  | { kind: 'expression'; text: string };

/**
 * The env entries of a chart's template text whose names are literal (`- name: CLEVERAGENTS_X`), with the
 * value each gets: `value: "8080"`, `value: {{ .Values.a.b | int64 | quote }}`, or `valueFrom.secretKeyRef`.
 */
export function templateEnv(text: string): Map<string, TemplateEnvValue> {
  const env = new Map<string, TemplateEnvValue>();
  const lines = text.split('\n');
  lines.forEach((line, index) => {
    const name = /^\s*- name: ([A-Z][A-Z0-9_]*)\s*$/.exec(line)?.[1];
    if (!name) return;
    const next = lines[index + 1] ?? '';
    const value = /^\s*value:\s*(.*)$/.exec(next)?.[1].trim();
    if (value !== undefined) {
      const fromValues = /^\{\{-?\s*\.Values\.([A-Za-z0-9_.]+)\s*(?:\|\s*(?:int64|quote|toString)\s*)*-?\}\}$/.exec(
        value,
      );
      if (fromValues) env.set(name, { kind: 'values', path: fromValues[1] });
      else if (/^"[^"{}]*"$/.test(value)) env.set(name, { kind: 'literal', value: value.slice(1, -1) });
      else if (/^[^"'{}\s][^{}]*$/.test(value)) env.set(name, { kind: 'literal', value });
      else env.set(name, { kind: 'expression', text: value });
      return;
    }
    if (/^\s*valueFrom:\s*$/.test(next) && /^\s*secretKeyRef:\s*$/.test(lines[index + 2] ?? '')) {
      const key = lines
        .slice(index + 3, index + 7)
        .map((l) => /^\s*key:\s*\{\{\s*\.Values\.([A-Za-z0-9_.]+)\s*\}\}\s*$/.exec(l)?.[1])
        .find((k) => k !== undefined);
      env.set(name, { kind: 'secret', key: key ?? '' });
      return;
    }
    env.set(name, { kind: 'expression', text: next.trim() });
  });
  return env;
}

/** The `.Values.a.b` paths a template text refers to (`$.Values` included). */
export function valuesReferences(text: string): string[] {
  return [
    ...new Set([...text.matchAll(/\.Values\.([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)/g)].map((m) => m[1])),
  ].sort();
}

/** The value at a dotted path, or `missing` when a key on the way is absent. */
export function valueAt(values: unknown, path: string): unknown {
  let node: unknown = values;
  for (const key of path.split('.')) {
    if (node === null || typeof node !== 'object' || !Object.prototype.hasOwnProperty.call(node, key)) {
      return MISSING;
    }
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}
export const MISSING = Symbol('missing');

/** What the Dockerfile's final stage says: its port, its `ENV`s, its user and its health check. */
export interface DockerfileFacts {
  expose: number[];
  env: Record<string, string>;
  user: string | undefined;
  healthcheck: string | undefined;
}

export function dockerfileFacts(text: string): DockerfileFacts {
  const joined = text.replace(/\\\n/g, ' ');
  const stages = joined.split(/^FROM\s/m);
  const last = stages[stages.length - 1];
  const facts: DockerfileFacts = { expose: [], env: {}, user: undefined, healthcheck: undefined };
  for (const line of last.split('\n')) {
    const [instruction, ...rest] = line.trim().split(/\s+/);
    const args = rest.join(' ');
    if (instruction === 'EXPOSE') facts.expose.push(...rest.map((p) => Number.parseInt(p, 10)));
    if (instruction === 'USER') facts.user = args;
    if (instruction === 'HEALTHCHECK') facts.healthcheck = args;
    if (instruction === 'ENV') {
      for (const pair of rest) {
        const eq = pair.indexOf('=');
        if (eq > 0) facts.env[pair.slice(0, eq)] = pair.slice(eq + 1);
      }
    }
  }
  return facts;
}

/**
 * The OpenTelemetry SDK's standard environment variables (the OTel specification's "SDK environment
 * variables", the OTLP exporter's, and the GenAI instrumentations' content switch): the only OTEL_* names
 * a deployment file may set. The server has no telemetry settings of its own.
 */
const OTLP_OPTIONS = ['ENDPOINT', 'PROTOCOL', 'HEADERS', 'TIMEOUT', 'COMPRESSION', 'INSECURE'];
const OTLP_TLS = ['CERTIFICATE', 'CLIENT_KEY', 'CLIENT_CERTIFICATE'];
export const OTEL_VARIABLES: ReadonlySet<string> = new Set([
  'OTEL_SDK_DISABLED',
  'OTEL_SERVICE_NAME',
  'OTEL_RESOURCE_ATTRIBUTES',
  'OTEL_LOG_LEVEL',
  'OTEL_PROPAGATORS',
  'OTEL_TRACES_EXPORTER',
  'OTEL_METRICS_EXPORTER',
  'OTEL_LOGS_EXPORTER',
  'OTEL_TRACES_SAMPLER',
  'OTEL_TRACES_SAMPLER_ARG',
  'OTEL_METRIC_EXPORT_INTERVAL',
  'OTEL_METRIC_EXPORT_TIMEOUT',
  'OTEL_BSP_SCHEDULE_DELAY',
  'OTEL_BSP_EXPORT_TIMEOUT',
  'OTEL_BSP_MAX_QUEUE_SIZE',
  'OTEL_BSP_MAX_EXPORT_BATCH_SIZE',
  'OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT',
  'OTEL_ATTRIBUTE_COUNT_LIMIT',
  'OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT',
  'OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT',
  'OTEL_SPAN_EVENT_COUNT_LIMIT',
  'OTEL_SPAN_LINK_COUNT_LIMIT',
  'OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE',
  'OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT',
  ...['', 'TRACES_', 'METRICS_', 'LOGS_'].flatMap((signal) =>
    [...OTLP_OPTIONS, ...OTLP_TLS].map((option) => `OTEL_EXPORTER_OTLP_${signal}${option}`),
  ),
]);

/** Every `OTEL_*` name a text mentions: keys, interpolations, comments alike. */
export function otelMentions(text: string): string[] {
  return [...new Set(text.match(/\bOTEL_[A-Z0-9_]*[A-Z0-9]\b/g) ?? [])].sort();
}

/** The `NAME=value` lines of a `.env` text (comments and blank lines left out, one pair of quotes removed). */
export function dotEnv(text: string): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const match of text.matchAll(/^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/gm)) {
    const value = match[2].trim();
    vars[match[1]] = /^(['"]).*\1$/.test(value) ? value.slice(1, -1) : value;
  }
  return vars;
}

/**
 * Renders one `define` of a chart template with `values`, for the small part of Go templates the chart's
 * telemetry block keeps to: `if` / `else if` / `else` / `end` with a `.Values` path as the condition, each
 * on a line of its own, comment lines, and `{{ .Values.path }}` or `{{ .Values.path | quote }}` inside a
 * line. Anything else throws, so that a template this cannot read is never passed by mistake. Truth is
 * Go's: false, 0, "", null, an empty list or map and a missing key are false.
 */
export function renderDefine(text: string, name: string, values: Record<string, unknown>): string {
  const start = text.indexOf(`{{- define "${name}" -}}`);
  if (start < 0) throw new Error(`no define "${name}"`);
  const lines = text.slice(start).split('\n').slice(1);
  const truthy = (path: string): boolean => {
    const value = valueAt({ Values: values }, path.replace(/^\./, ''));
    if (value === MISSING || value === null || value === undefined || value === false) return false;
    if (value === 0 || value === '') return false;
    if (Array.isArray(value)) return value.length > 0;
    if (typeof value === 'object') return Object.keys(value).length > 0;
    return true;
  };
  const substitute = (line: string): string =>
    line.replace(/\{\{-?\s*(\.Values\.[A-Za-z0-9_.]+)\s*(\|\s*quote\s*)?-?\}\}/g, (_, path: string, quote) => {
      const value = valueAt({ Values: values }, path.slice(1));
      if (typeof value === 'object' && value !== null) throw new Error(`${path} is not a scalar`);
      const scalar = typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
      const text = scalar ? String(value) : '';
      return quote ? JSON.stringify(text) : text;
    });
  const out: string[] = [];
  // One frame per open `if`: whether its branch now renders, and whether an earlier branch already did.
  const frames: { on: boolean; taken: boolean }[] = [];
  const rendering = (): boolean => frames.every((f) => f.on);
  for (const raw of lines) {
    const action = /^\s*\{\{-?\s*(.*?)\s*-?\}\}\s*$/.exec(raw)?.[1];
    if (action !== undefined && /^\/\*.*\*\/$/.test(action)) continue;
    if (action === 'end') {
      if (frames.length === 0) return out.join('\n');
      frames.pop();
      continue;
    }
    const condition = action === undefined ? undefined : /^(else )?if (\.Values\.[A-Za-z0-9_.]+)$/.exec(action);
    if (condition && !condition[1]) {
      const on = truthy(condition[2]);
      frames.push({ on, taken: on });
      continue;
    }
    if (condition || action === 'else') {
      const frame = frames.at(-1);
      if (!frame) throw new Error(`${action} outside an if`);
      frame.on = !frame.taken && (condition ? truthy(condition[2]) : true);
      frame.taken ||= frame.on;
      continue;
    }
    if (action !== undefined) throw new Error(`unsupported template action: {{ ${action} }}`);
    const line = substitute(raw);
    if (line.includes('{{')) throw new Error(`unsupported template expression in: ${raw.trim()}`);
    if (rendering()) out.push(line);
  }
  throw new Error(`define "${name}" has no end`);
}
