import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PATH_METADATA } from '@nestjs/common/constants.js';
import { parse } from 'yaml';
import { parseAdminArgs } from '../../packages/server/src/cli/admin.args.js';
import { AppConfig } from '../../packages/server/src/config/app.config.js';
import { EnvironmentVariables } from '../../packages/server/src/config/environment.js';
import { OIDC_ENV_VARS } from '../../packages/server/src/config/oidc.settings.js';
import { HealthController } from '../../packages/server/src/health/health.controller.js';
import { captureContent } from '../../packages/server/src/telemetry/content.js';
import { exportersFor, otlpProtocol } from '../../packages/server/src/telemetry/settings.js';
import {
  composeEnvironment,
  dockerfileFacts,
  dotEnv,
  interpolate,
  interpolatedNames,
  MISSING,
  OTEL_VARIABLES,
  otelMentions,
  renderDefine,
  templateEnv,
  unknownVariables,
  valueAt,
  valuesReferences,
  variableMentions,
  type TemplateEnvValue,
} from './manifest-rules.js';

/*
 * The deployment files, parsed (never run: neither Docker nor Helm runs on the machine the project is
 * developed on): docker-compose.yml, .env.example, the Helm chart deploy/helm/cleveragents and the
 * Dockerfile. Every CLEVERAGENTS_* / OIDC_* variable they name must be one the server's configuration
 * reads (a misspelt one would be ignored without a word), the environments they give the server must
 * pass its own validation, and the port, the probe paths, the user and the migration command must be
 * the code's.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CHART = join(ROOT, 'deploy/helm/cleveragents');

const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

/** What the server reads: the properties of its environment schema, and the OIDC settings it parses. */
const KNOWN = new Set<string>([...Object.keys(new EnvironmentVariables()), ...OIDC_ENV_VARS]);
const SERVER_DEFAULTS = new EnvironmentVariables();

/** The path Nest routes to a handler of HealthController. */
function route(handler: 'live' | 'ready'): string {
  const method = Object.getOwnPropertyDescriptor(HealthController.prototype, handler)?.value as object;
  return `/${String(Reflect.getMetadata(PATH_METADATA, method))}`;
}
const HEALTHZ = route('live');
const READYZ = route('ready');

interface ComposeFile {
  services: Record<string, Record<string, any>>;
}
const composeText = read('docker-compose.yml');
const compose = parse(composeText) as ComposeFile;

function chartFiles(): { name: string; text: string }[] {
  const templates = readdirSync(join(CHART, 'templates')).map((name) => ({
    name: `templates/${name}`,
    text: readFileSync(join(CHART, 'templates', name), 'utf8'),
  }));
  return [
    { name: 'Chart.yaml', text: readFileSync(join(CHART, 'Chart.yaml'), 'utf8') },
    { name: 'values.yaml', text: readFileSync(join(CHART, 'values.yaml'), 'utf8') },
    ...templates,
  ];
}
const chart = chartFiles();
const chartText = (name: string): string => chart.find((f) => f.name === name)!.text;
const values = parse(chartText('values.yaml')) as Record<string, any>;
const helpersEnv = templateEnv(chartText('templates/_helpers.tpl'));

/** Stand-ins for what the chart reads from Secrets and works out at render time. */
const SECRET_KEY = randomBytes(32).toString('base64');
const RENDERED_ELSEWHERE: Record<string, string> = {
  DATABASE_URL: 'postgres://cleveragents:secret@postgres.db:5432/cleveragents',
  CLEVERAGENTS_SECRET_KEY: SECRET_KEY,
  PUBLIC_URL: 'https://cleveragents.example.com',
};

/** A values.yaml scalar as an env value; anything else is a mistake in the chart. */
function scalar(value: unknown, where: string): string {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new Error(`${where} is not a string, number or boolean`);
}

/** The environment the chart gives the server with values.yaml as it is (optional secrets left out). */
function chartEnvironment(entries: Map<string, TemplateEnvValue>, chartValues: Record<string, any>) {
  const env: Record<string, string> = {};
  for (const [name, entry] of entries) {
    if (entry.kind === 'literal') env[name] = entry.value;
    else if (entry.kind === 'values') env[name] = scalar(valueAt(chartValues, entry.path), entry.path);
    else if (name in RENDERED_ELSEWHERE) env[name] = RENDERED_ELSEWHERE[name];
  }
  for (const [name, value] of Object.entries(chartValues.config as Record<string, unknown>)) {
    if (value !== null && value !== '') env[name] = scalar(value, `config.${name}`);
  }
  return env;
}

describe('deployment files: the variables they set are the server configuration', () => {
  it('docker-compose.yml names no variable the server does not read (keys, ${...} and comments)', () => {
    const named = [
      ...variableMentions(composeText),
      ...Object.values(compose.services).flatMap((service) => Object.keys(composeEnvironment(service))),
      ...interpolatedNames(composeText),
    ].filter((name) => /^(CLEVERAGENTS|OIDC)_/.test(name));
    expect(named).toContain('CLEVERAGENTS_MODEL_BASE_URL');
    expect(unknownVariables(new Set(named), KNOWN)).toEqual([]);
  });

  it('.env.example (which Compose reads as .env) names no variable the server does not read', () => {
    const text = read('.env.example');
    const assigned = [...text.matchAll(/^([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]);
    expect(assigned).toContain('CLEVERAGENTS_MODEL');
    const named = [...variableMentions(text), ...assigned.filter((name) => /^(CLEVERAGENTS|OIDC)_/.test(name))];
    expect(unknownVariables(new Set(named), KNOWN)).toEqual([]);
  });

  it('the chart names no variable the server does not read (templates, values, config keys)', () => {
    const named = [...chart.flatMap((file) => variableMentions(file.text)), ...Object.keys(values.config)];
    expect(named).toEqual(expect.arrayContaining(['CLEVERAGENTS_SHUTDOWN_GRACE_MS', 'CLEVERAGENTS_ACTOR_BACKEND']));
    expect(unknownVariables(new Set(named), KNOWN)).toEqual([]);
    // Besides the server's settings the templates set nothing but what the server also reads.
    expect(unknownVariables(helpersEnv.keys(), KNOWN)).toEqual([]);
  });

  it('the OTEL_* variables they name are standard OpenTelemetry ones (Compose, .env.example, the chart)', () => {
    const named = [
      ...otelMentions(composeText),
      ...otelMentions(read('.env.example')),
      ...otelMentions(read('docker/otel-collector/config.yaml')),
      ...chart.flatMap((file) => otelMentions(file.text)),
    ];
    expect(named).toEqual(expect.arrayContaining(['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_TRACES_SAMPLER']));
    expect(unknownVariables(new Set(named), OTEL_VARIABLES)).toEqual([]);
  });

  it("every .Values path the chart's templates use exists in values.yaml", () => {
    const missing = chart
      .filter((file) => file.name.startsWith('templates/'))
      .flatMap((file) => valuesReferences(file.text).map((path) => ({ file: file.name, path })))
      .filter(({ path }) => valueAt(values, path) === MISSING);
    expect(missing).toEqual([]);
  });
});

describe('docker-compose.yml: the trial runs the real orchestrator', () => {
  const server = compose.services.server;
  /** The server's environment with an empty `.env` (Compose's defaults apply). */
  const trialEnv = Object.fromEntries(
    Object.entries(composeEnvironment(server)).map(([key, value]) => [key, interpolate(value, {})]),
  );

  it('its environment passes the server validation and runs `local` on the ollama profile by default', () => {
    const config = AppConfig.fromEnv(trialEnv);
    expect(config.actorBackend).toBe('local');
    expect(config.model.baseUrl).toBe('http://ollama:11434/v1');
    expect(config.model.model).toBe(trialEnv.CLEVERAGENTS_MODEL);
    expect(config.database.kind).toBe('postgres');
  });

  it('a model from .env replaces the default; the conformance actor is in no service', () => {
    const fromDotEnv = { CLEVERAGENTS_MODEL_BASE_URL: 'http://vllm.internal:8000/v1', CLEVERAGENTS_MODEL: 'm' };
    const env = Object.fromEntries(
      Object.entries(composeEnvironment(server)).map(([key, value]) => [key, interpolate(value, fromDotEnv)]),
    );
    expect(AppConfig.fromEnv(env).model).toMatchObject({ baseUrl: 'http://vllm.internal:8000/v1', model: 'm' });
    const backends = Object.values(compose.services)
      .map((service) => composeEnvironment(service))
      .filter((environment) => 'CLEVERAGENTS_ACTOR_BACKEND' in environment)
      .map((environment) => interpolate(environment.CLEVERAGENTS_ACTOR_BACKEND, {}));
    expect(backends).toEqual(['local']);
  });

  it('the ollama profile serves the URL the server uses and pulls the model it names', () => {
    const { ollama, 'ollama-pull': pull } = compose.services;
    expect(ollama.profiles).toEqual(['ollama']);
    expect(pull.profiles).toEqual(['ollama']);
    expect(new URL(trialEnv.CLEVERAGENTS_MODEL_BASE_URL).host).toBe('ollama:11434');
    expect(interpolate(composeEnvironment(pull).PULL_MODEL, {})).toBe(trialEnv.CLEVERAGENTS_MODEL);
    expect(interpolate(composeEnvironment(pull).OLLAMA_HOST, {})).toBe('http://ollama:11434');
    expect(pull.depends_on).toEqual({ ollama: { condition: 'service_healthy' } });
    // Without the profile the server starts all the same: the dependency is optional.
    expect(server.depends_on['ollama-pull']).toEqual({ condition: 'service_completed_successfully', required: false });
    expect(pull.command.join(' ')).toContain('ollama pull "$$PULL_MODEL"');
  });

  it("publishes the server's port: the one it listens on, the code's default", () => {
    expect(Number(trialEnv.PORT)).toBe(SERVER_DEFAULTS.PORT);
    expect(server.ports).toEqual([`127.0.0.1:${SERVER_DEFAULTS.PORT}:${SERVER_DEFAULTS.PORT}`]);
  });
});

describe('docker-compose.yml: the tracing profile', () => {
  const server = compose.services.server;
  const collector = compose.services['otel-collector'];
  const jaeger = compose.services.jaeger;
  const collectorConfig = parse(read('docker/otel-collector/config.yaml')) as {
    receivers: Record<string, any>;
    processors: Record<string, any>;
    exporters: Record<string, any>;
    service: { pipelines: Record<string, { receivers: string[]; processors: string[]; exporters: string[] }> };
  };
  /** The server's environment with `vars` as `.env`. */
  const serverEnv = (vars: Record<string, string>) =>
    Object.fromEntries(
      Object.entries(composeEnvironment(server)).map(([key, value]) => [key, interpolate(value, vars)]),
    ) as NodeJS.ProcessEnv;
  /** The `.env` lines .env.example gives for the profile, in its comments (`#   NAME=value`). */
  const profileLines = dotEnv(
    [...read('.env.example').matchAll(/^#\s+((?:COMPOSE_PROFILES|OTEL_[A-Z_]+)=\S+)$/gm)].map((m) => m[1]).join('\n'),
  );
  const hostPort = (endpoint: string) => {
    const [host, port] = endpoint.split(':');
    return { host, port: Number(port) };
  };

  it('has a collector and Jaeger in the profile alone, on pinned images, ports on the loopback only', () => {
    expect(collector.profiles).toEqual(['tracing']);
    expect(jaeger.profiles).toEqual(['tracing']);
    expect(collector.image).toMatch(/^otel\/opentelemetry-collector-contrib:\d+\.\d+\.\d+$/);
    expect(jaeger.image).toMatch(/^jaegertracing\/jaeger:\d+\.\d+\.\d+$/);
    for (const service of [collector, jaeger]) {
      for (const port of service.ports as string[]) expect(port).toMatch(/^127\.0\.0\.1:\d+:\d+$/);
    }
    expect(jaeger.ports).toEqual(['127.0.0.1:16686:16686']);
    // The server does not wait for the collector: without the profile it starts all the same.
    expect(Object.keys(server.depends_on)).not.toContain('otel-collector');
    // The collector reads the file in the repository, where its command says.
    const config = /^--config=(.+)$/.exec((collector.command as string[])[0])![1];
    expect(collector.volumes).toEqual([`./docker/otel-collector/config.yaml:${config}:ro`]);
  });

  it("the collector's configuration wires the OTLP receiver through memory_limiter and batch to Jaeger", () => {
    const { receivers, processors, exporters, service } = collectorConfig;
    // Each component a pipeline names is defined, and each defined one is used.
    const used = { receivers: new Set<string>(), processors: new Set<string>(), exporters: new Set<string>() };
    for (const pipeline of Object.values(service.pipelines)) {
      for (const kind of ['receivers', 'processors', 'exporters'] as const) {
        for (const name of pipeline[kind]) {
          expect({ kind, name, defined: name in collectorConfig[kind] }).toEqual({ kind, name, defined: true });
          used[kind].add(name);
        }
      }
    }
    expect([...used.receivers].sort()).toEqual(Object.keys(receivers).sort());
    expect([...used.processors].sort()).toEqual(Object.keys(processors).sort());
    expect([...used.exporters].sort()).toEqual(Object.keys(exporters).sort());

    const traces = service.pipelines.traces;
    expect(traces.receivers).toEqual(['otlp']);
    expect(traces.processors[0]).toBe('memory_limiter');
    expect(traces.processors).toContain('batch');
    // Traces leave by OTLP/gRPC for a service of the same profile, on the port Jaeger takes OTLP/gRPC on.
    expect(traces.exporters).toHaveLength(1);
    expect(traces.exporters[0]).toMatch(/^otlp_grpc(\/|$)/);
    const exporter = exporters[traces.exporters[0]] as { endpoint: string; tls: { insecure: boolean } };
    expect(hostPort(exporter.endpoint)).toEqual({ host: 'jaeger', port: 4317 });
    expect(exporter.tls.insecure).toBe(true);
    // The server pushes metrics too once an endpoint is set: the collector takes them.
    expect(service.pipelines.metrics.receivers).toEqual(['otlp']);
    expect(service.pipelines.metrics.processors[0]).toBe('memory_limiter');

    // The receiver listens on every interface of the container, on the ports Compose publishes.
    const { grpc, http } = receivers.otlp.protocols as Record<string, { endpoint: string }>;
    expect(hostPort(grpc.endpoint)).toEqual({ host: '0.0.0.0', port: 4317 });
    expect(hostPort(http.endpoint)).toEqual({ host: '0.0.0.0', port: 4318 });
    expect(collector.ports).toEqual(['127.0.0.1:4317:4317', '127.0.0.1:4318:4318']);
  });

  it('the server exports nothing without the .env lines, nor with .env.example copied as it is', () => {
    for (const vars of [{}, dotEnv(read('.env.example'))]) {
      const env = serverEnv(vars);
      expect(exportersFor('traces', env)).toEqual([]);
      expect(exportersFor('metrics', env)).toEqual([]);
      expect(captureContent(env)).toBe(false);
    }
  });

  it('with the .env lines the docs give, the server sends traces and metrics to the collector it starts', () => {
    expect(profileLines.COMPOSE_PROFILES).toBe('tracing');
    const env = serverEnv(profileLines);
    expect(exportersFor('traces', env)).toEqual(['otlp']);
    expect(exportersFor('metrics', env)).toEqual(['otlp']);
    expect(otlpProtocol('traces', env)).toBe('http/protobuf');
    // http/protobuf: the collector's HTTP receiver, by its service name in the Compose network.
    const url = new URL(env.OTEL_EXPORTER_OTLP_ENDPOINT!);
    expect(compose.services[url.hostname].profiles).toEqual([profileLines.COMPOSE_PROFILES]);
    const http = collectorConfig.receivers.otlp.protocols.http as { endpoint: string };
    expect(Number(url.port)).toBe(hostPort(http.endpoint).port);
    // OTEL_METRICS_EXPORTER=none keeps metrics on /metrics only; content capture is asked for by name.
    expect(exportersFor('metrics', serverEnv({ ...profileLines, OTEL_METRICS_EXPORTER: 'none' }))).toEqual([]);
    const capturing = { ...profileLines, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true' };
    expect(captureContent(serverEnv(capturing))).toBe(true);
    expect(AppConfig.fromEnv(serverEnv(profileLines)).actorBackend).toBe('local');
  });
});

describe('the Helm chart', () => {
  const deployment = chartText('templates/deployment.yaml');
  const job = chartText('templates/migration-job.yaml');

  it('gives the server an environment that passes its validation, secrets from a Secret, no migration at start', () => {
    const env = chartEnvironment(helpersEnv, values);
    const config = AppConfig.fromEnv(env);
    expect(config.nodeEnv).toBe('production');
    expect(config.migrateOnStart).toBe(false);
    expect(config.actorBackend).toBe('local');
    expect(config.shutdownGraceMs).toBe(values.shutdownGraceMs);
    expect(config.secretKey.source).toBe('environment');
    for (const name of [
      'DATABASE_URL',
      'CLEVERAGENTS_SECRET_KEY',
      'CLEVERAGENTS_MODEL_API_KEY',
      'CLEVERAGENTS_LANGGRAPH_API_KEY',
    ]) {
      expect({ name, kind: helpersEnv.get(name)?.kind }).toEqual({ name, kind: 'secret' });
    }
    // Each Secret key the chart reads comes from values.secretKeys, which names it after its variable.
    for (const [name, entry] of helpersEnv) {
      if (entry.kind === 'secret') expect(valueAt(values, entry.key)).toBe(name);
    }
    // The Deployment and the Job share the environment.
    expect(deployment).toContain('{{- include "cleveragents.env" . | nindent 12 }}');
    expect(job).toContain('{{- include "cleveragents.env" . | nindent 12 }}');
  });

  it('refuses, in its template, a config entry for what it sets itself', () => {
    const helpers = chartText('templates/_helpers.tpl');
    const reserved = /\$reserved := list ((?:"[A-Z_]+" ?)+)/.exec(helpers)![1].match(/[A-Z_]+/g)!;
    const setByChart = [...helpersEnv.keys()];
    expect([...reserved].sort()).toEqual([...setByChart].sort());
    expect(Object.keys(values.config).filter((name) => reserved.includes(name))).toEqual([]);
  });

  it("listens where the probes look: the container port is the server's port, the paths its routes", () => {
    expect(helpersEnv.get('PORT')).toEqual({ kind: 'literal', value: String(SERVER_DEFAULTS.PORT) });
    expect(/containerPort: (\d+)/.exec(deployment)?.[1]).toBe(String(SERVER_DEFAULTS.PORT));
    expect(/- name: http\n\s+containerPort:/.test(deployment)).toBe(true);
    expect(values.livenessProbe.httpGet).toEqual({ path: HEALTHZ, port: 'http' });
    expect(values.startupProbe.httpGet).toEqual({ path: HEALTHZ, port: 'http' });
    // The model endpoint's outage, shared by every replica, does not take them out of the Service.
    expect(values.readinessProbe.httpGet).toEqual({ path: `${READYZ}?exclude=actorBackend`, port: 'http' });
    // The startup probe outlasts the server's wait for PostgreSQL at start.
    expect(values.startupProbe.periodSeconds * values.startupProbe.failureThreshold).toBeGreaterThan(
      SERVER_DEFAULTS.CLEVERAGENTS_DATABASE_CONNECT_SECONDS,
    );
  });

  it('gives a pod time to drain: termination grace ≥ preStop + CLEVERAGENTS_SHUTDOWN_GRACE_MS + 5 s', () => {
    expect(values.shutdownGraceMs).toBe(SERVER_DEFAULTS.CLEVERAGENTS_SHUTDOWN_GRACE_MS);
    const needed = values.preStopSleepSeconds + Math.ceil(values.shutdownGraceMs / 1000) + 5;
    expect(values.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(needed);
    expect(deployment).toContain('terminationGracePeriodSeconds: {{ .Values.terminationGracePeriodSeconds }}');
    expect(deployment).toContain('{{- $needed := add .Values.preStopSleepSeconds $graceSeconds 5 }}');
  });

  it('migrates first: a pre-install/pre-upgrade Job runs the admin CLI of the same image', () => {
    expect(job).toContain('"helm.sh/hook": pre-install,pre-upgrade');
    expect(job).toContain('image: {{ include "cleveragents.image" . }}');
    expect(deployment).toContain('image: {{ include "cleveragents.image" . }}');
    const command = JSON.parse(/command: (\[.*\])/.exec(job)![1]) as string[];
    const pkg = JSON.parse(read('packages/server/package.json')) as { bin: Record<string, string> };
    expect(command.slice(0, 2)).toEqual(['node', pkg.bin['cleveragents-admin']]);
    expect(parseAdminArgs(command.slice(2))).toEqual({ kind: 'migrate.run' });
    // The chart's own Secret, when it makes one, exists before the Job: a hook of lower weight.
    const secret = chartText('templates/secret.yaml');
    expect(secret).toContain('"helm.sh/hook": pre-install,pre-upgrade');
    expect(secret).toContain('"helm.sh/hook-weight": "-10"');
    expect(job).toContain('"helm.sh/hook-weight": "0"');
  });

  it("runs as the image's non-root user on a read-only root filesystem, /tmp and the data dir writable", () => {
    const uid = Number(dockerfileFacts(read('Dockerfile')).user?.split(':')[0]);
    expect(uid).toBeGreaterThan(0);
    expect(values.podSecurityContext).toMatchObject({ runAsNonRoot: true, runAsUser: uid, runAsGroup: uid });
    expect(values.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
    const helpers = chartText('templates/_helpers.tpl');
    expect(helpers).toMatch(/- name: tmp\n\s+mountPath: \/tmp/);
    expect(helpers).toMatch(/- name: data\n\s+mountPath: \/app\/data/);
    expect(helpersEnv.get('CLEVERAGENTS_DATA_DIR')).toEqual({ kind: 'literal', value: '/app/data' });
  });

  describe('telemetry', () => {
    const telemetryTpl = chartText('templates/_telemetry.tpl');
    interface EnvEntry {
      name: string;
      value?: string;
      valueFrom?: { secretKeyRef: { name: string; key: string } };
    }
    /** The telemetry env entries the chart renders with `telemetry` over values.yaml's. */
    const render = (telemetry: Record<string, any> = {}): EnvEntry[] => {
      const otlp = { ...values.telemetry.otlp, ...(telemetry.otlp ?? {}) };
      const merged = { ...values, telemetry: { ...values.telemetry, ...telemetry, otlp } };
      return (parse(renderDefine(telemetryTpl, 'cleveragents.telemetryEnv', merged)) ?? []) as EnvEntry[];
    };
    /** The entries as the server's environment; a Secret's value stands in as `<secret name/key>`. */
    const environment = (entries: EnvEntry[]): NodeJS.ProcessEnv =>
      Object.fromEntries(
        entries.map((e) => [
          e.name,
          e.value ?? `<secret ${e.valueFrom!.secretKeyRef.name}/${e.valueFrom!.secretKeyRef.key}>`,
        ]),
      );

    it('sets no OTEL_* variable by default: the server exports nothing', () => {
      expect(render()).toEqual([]);
      expect(values.telemetry).toMatchObject({ metricsExport: false, captureContent: false, sampler: '' });
      expect(exportersFor('traces', environment(render()))).toEqual([]);
    });

    it('an endpoint alone exports traces; metrics stay on /metrics unless metricsExport', () => {
      const endpoint = 'http://otel-collector.observability:4318';
      const entries = render({ otlp: { endpoint } });
      expect(entries).toEqual([
        { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: endpoint },
        { name: 'OTEL_METRICS_EXPORTER', value: 'none' },
      ]);
      const env = environment(entries);
      expect(exportersFor('traces', env)).toEqual(['otlp']);
      expect(exportersFor('metrics', env)).toEqual([]);
      expect(otlpProtocol('traces', env)).toBe('http/protobuf');
      expect(captureContent(env)).toBe(false);
      expect(exportersFor('metrics', environment(render({ otlp: { endpoint }, metricsExport: true })))).toEqual([
        'otlp',
      ]);
    });

    it('every value on: each its variable, the headers from a Secret, never from values', () => {
      const entries = render({
        otlp: { endpoint: 'https://otlp.example.com:4317', protocol: 'grpc', headersSecret: 'otlp-headers' },
        metricsExport: true,
        sampler: 'traceidratio',
        samplerArg: '0.1',
        serviceName: 'agents-eu',
        resourceAttributes: 'deployment.environment.name=production,k8s.cluster.name=eu-1',
        captureContent: true,
      });
      expect(entries).toEqual([
        { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: 'https://otlp.example.com:4317' },
        { name: 'OTEL_EXPORTER_OTLP_PROTOCOL', value: 'grpc' },
        {
          name: 'OTEL_EXPORTER_OTLP_HEADERS',
          valueFrom: { secretKeyRef: { name: 'otlp-headers', key: 'OTEL_EXPORTER_OTLP_HEADERS' } },
        },
        { name: 'OTEL_METRICS_EXPORTER', value: 'otlp' },
        { name: 'OTEL_TRACES_SAMPLER', value: 'traceidratio' },
        { name: 'OTEL_TRACES_SAMPLER_ARG', value: '0.1' },
        { name: 'OTEL_SERVICE_NAME', value: 'agents-eu' },
        { name: 'OTEL_RESOURCE_ATTRIBUTES', value: 'deployment.environment.name=production,k8s.cluster.name=eu-1' },
        { name: 'OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT', value: 'true' },
      ]);
      const env = environment(entries);
      expect(exportersFor('traces', env)).toEqual(['otlp']);
      expect(exportersFor('metrics', env)).toEqual(['otlp']);
      expect(otlpProtocol('metrics', env)).toBe('grpc');
      expect(captureContent(env)).toBe(true);
      // The Secret's key is read from values like the chart's other secrets, named after its variable.
      expect(templateEnv(telemetryTpl).get('OTEL_EXPORTER_OTLP_HEADERS')).toEqual({
        kind: 'secret',
        key: 'telemetry.otlp.headersSecretKey',
      });
      expect(values.telemetry.otlp.headersSecretKey).toBe('OTEL_EXPORTER_OTLP_HEADERS');
    });

    it("is part of the server's environment, and config may not set what it sets", () => {
      const helpers = chartText('templates/_helpers.tpl');
      const envDefine = helpers.slice(helpers.indexOf('{{- define "cleveragents.env" -}}'));
      expect(envDefine.slice(0, envDefine.indexOf('{{- end -}}'))).toContain(
        '{{- include "cleveragents.telemetryEnv" . }}',
      );
      const listed = /\$telemetry := list ((?:"[A-Z_]+" ?)+)/.exec(helpers)![1].match(/[A-Z_]+/g)!;
      expect([...listed].sort()).toEqual([...templateEnv(telemetryTpl).keys()].sort());
      expect(Object.keys(values.config).filter((name) => name.startsWith('OTEL_'))).toEqual([]);
    });
  });

  it('has a PodDisruptionBudget, requests sized, and the server version as appVersion', () => {
    expect(chartText('templates/poddisruptionbudget.yaml')).toContain('kind: PodDisruptionBudget');
    expect(values.podDisruptionBudget).toEqual({ enabled: true, maxUnavailable: 1 });
    expect(values.resources.requests).toEqual({ cpu: '500m', memory: '384Mi' });
    const chartYaml = parse(chartText('Chart.yaml')) as { appVersion: string };
    expect(chartYaml.appVersion).toBe(
      (JSON.parse(read('packages/server/package.json')) as { version: string }).version,
    );
  });
});

describe('the Dockerfile', () => {
  const facts = dockerfileFacts(read('Dockerfile'));

  it("exposes the server's port and sets it", () => {
    expect(facts.expose).toEqual([SERVER_DEFAULTS.PORT]);
    expect(facts.env.PORT).toBe(String(SERVER_DEFAULTS.PORT));
    expect(facts.env.HOST).toBe('0.0.0.0');
  });

  it('checks its health on /healthz, on the port it listens on', () => {
    expect(facts.healthcheck).toContain(`+'${HEALTHZ}')`);
    expect(facts.healthcheck).toContain(`process.env.PORT||${SERVER_DEFAULTS.PORT}`);
  });

  it('runs as a numeric non-root user', () => {
    expect(facts.user).toMatch(/^[1-9]\d*:[1-9]\d*$/);
  });
});

describe('the rules catch what they are for', () => {
  it('a misspelt variable, wherever it is, is reported with the closest known name', () => {
    const text = 'environment:\n  CLEVERAGENTS_MODEL_BASEURL: x\n  OIDC_ISSUER: ${OIDC_AUDIENCE}\n# CLEVERAGENTS_*\n';
    expect(unknownVariables(variableMentions(text), KNOWN)).toEqual([
      'CLEVERAGENTS_MODEL_BASEURL (closest: CLEVERAGENTS_MODEL_BASE_URL)',
      'OIDC_ISSUER (closest: OIDC_ISSUER_URL)',
    ]);
    expect(interpolatedNames('a: ${CLEVERAGENTS_MODL:-x} $$HOME $PORT')).toEqual(['CLEVERAGENTS_MODL', 'PORT']);
  });

  it('Compose environments in both forms, and its interpolation', () => {
    expect(composeEnvironment({ environment: ['A=1', 'B=x=y', 'C'] })).toEqual({ A: '1', B: 'x=y', C: '' });
    expect(composeEnvironment({ environment: { A: 1, B: null, C: true } })).toEqual({ A: '1', B: '', C: 'true' });
    expect(interpolate('${A:-d}|${A-d}|${B:-d}|${B-d}|$B|${C}|$$C', { A: '', B: 'b' })).toBe('d||b|b|b||$C');
  });

  it("a template's env entries: literal, from values, from a Secret, or an expression", () => {
    const text = [
      '- name: PORT',
      '  value: "8080"',
      '- name: CLEVERAGENTS_SHUTDOWN_GRACE_MS',
      '  value: {{ .Values.shutdownGraceMs | int64 | quote }}',
      '- name: LOG_LEVEL',
      '  value: {{ .Values.logLevel | quote }}',
      '- name: DATABASE_URL',
      '  valueFrom:',
      '    secretKeyRef:',
      '      name: {{ include "x" . }}',
      '      key: {{ .Values.secretKeys.databaseUrl }}',
      '- name: PUBLIC_URL',
      '  value: {{ . | quote }}',
      '- name: {{ $name }}',
      '  value: {{ $value | quote }}',
    ].join('\n');
    expect(Object.fromEntries(templateEnv(text))).toEqual({
      PORT: { kind: 'literal', value: '8080' },
      CLEVERAGENTS_SHUTDOWN_GRACE_MS: { kind: 'values', path: 'shutdownGraceMs' },
      LOG_LEVEL: { kind: 'values', path: 'logLevel' },
      DATABASE_URL: { kind: 'secret', key: 'secretKeys.databaseUrl' },
      PUBLIC_URL: { kind: 'expression', text: '{{ . | quote }}' },
    });
  });

  it('a .Values path values.yaml does not have', () => {
    const refs = valuesReferences('{{ .Values.image.tag }} {{ $.Values.ingress.hostz }} {{ .Values.config.X }}');
    expect(refs).toEqual(['config.X', 'image.tag', 'ingress.hostz']);
    expect(refs.filter((path) => valueAt(values, path) === MISSING)).toEqual(['config.X', 'ingress.hostz']);
  });

  it('an environment the server refuses fails the validation the files are put through', () => {
    const env = chartEnvironment(helpersEnv, { ...values, config: { CLEVERAGENTS_ACTOR_BACKEND: 'lokal' } });
    expect(() => AppConfig.fromEnv(env)).toThrow(/CLEVERAGENTS_ACTOR_BACKEND/);
    const noKey = { ...chartEnvironment(helpersEnv, values), CLEVERAGENTS_SECRET_KEY: '' };
    expect(() => AppConfig.fromEnv(noKey)).toThrow(/CLEVERAGENTS_SECRET_KEY/);
  });

  it('an OTEL_* name no OpenTelemetry SDK reads is reported', () => {
    const text = 'OTEL_EXPORTER_OTLP_ENDPONT: x\n# OTEL_TRACES_SAMPLER_ARG\nOTEL_TRACE_SAMPLER: y\n';
    expect(unknownVariables(otelMentions(text), OTEL_VARIABLES)).toEqual([
      'OTEL_EXPORTER_OTLP_ENDPONT (closest: OTEL_EXPORTER_OTLP_ENDPOINT)',
      'OTEL_TRACE_SAMPLER (closest: OTEL_TRACES_SAMPLER)',
    ]);
  });

  it('a .env text: assignments only, one pair of quotes removed', () => {
    expect(dotEnv('# A=commented\nB=1\nC="two words"\nD=\n  E=indented\n')).toEqual({ B: '1', C: 'two words', D: '' });
  });

  it('a define rendered: if, else if, else and end on their own lines, quoted paths, the rest refused', () => {
    const text = [
      '{{- define "x" -}}',
      '{{- /* a comment */}}',
      '{{- if .Values.a }}',
      '- A: {{ .Values.a | quote }}',
      '{{- else if .Values.b.c }}',
      '- B: {{ .Values.b.c }}',
      '{{- else }}',
      '- NONE',
      '{{- end }}',
      '{{- if .Values.list }}',
      '- LIST',
      '{{- end }}',
      '{{- end -}}',
    ].join('\n');
    expect(renderDefine(text, 'x', { a: 'x "y"', b: { c: 1 }, list: [] })).toBe('- A: "x \\"y\\""');
    expect(renderDefine(text, 'x', { a: '', b: { c: 1 }, list: [0] })).toBe('- B: 1\n- LIST');
    expect(renderDefine(text, 'x', { a: false, b: {}, list: [] })).toBe('- NONE');
    expect(() => renderDefine(text.replace('.Values.a | quote', '.Values.a | upper'), 'x', { a: 'v' })).toThrow(
      /unsupported template expression/,
    );
    expect(() => renderDefine(text.replace('if .Values.list', 'if and .Values.a .Values.list'), 'x', {})).toThrow(
      /unsupported template action/,
    );
  });

  it("the Dockerfile's last stage is the one read", () => {
    const facts = dockerfileFacts('FROM a AS b\nEXPOSE 1\nUSER root\nFROM c\nENV PORT=9 HOST=h\nEXPOSE 9\nUSER 5:5\n');
    expect(facts).toEqual({ expose: [9], env: { PORT: '9', HOST: 'h' }, user: '5:5', healthcheck: undefined });
  });
});
