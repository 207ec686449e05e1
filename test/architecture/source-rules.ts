import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, dirname, sep } from 'node:path';
import ts from 'typescript';
import { METHODS } from '../../src/contract/methods.js';

/** ADR-047 bypass detection: who may import the protocol boundary and the HTTP stack, and who may define routes. */
export interface Violation {
  file: string;
  rule: string;
  detail: string;
}

/** Files that may speak HTTP or hold the protocol boundary. */
const BOUNDARY_DIRS = ['src/a2a/'];
/**
 * HTTP authentication (SPEC.md §8): passport strategies and the guard read request headers, so they
 * may import the HTTP stack, but they define no route.
 */
const HTTP_AUTH_DIRS = ['src/auth/http/'];
/** Operational probes (SPEC.md §2): routes, but no client API. */
const PROBE_DIRS = ['src/health/', 'src/metrics/'];
/** Bootstrap files wire everything together. */
const BOOTSTRAP_FILES = ['src/main.ts', 'src/stdio.ts', 'src/app.factory.ts', 'src/app.module.ts'];
/**
 * What a domain module may use of the boundary: nothing (the handler decorator and the call context are
 * in src/rpc/, the version facts in src/contract/).
 */
const BOUNDARY_PUBLIC_API: string[] = [];

const HTTP_MODULES = [
  /^express(\/|$)/,
  /^@nestjs\/platform-express(\/|$)/,
  /^body-parser$/,
  /^@a2a-js\/sdk\/server\/(express|grpc)(\/|$)/,
  /^@a2a-js\/sdk\/compat\/v0_3\/server\/(express|grpc)(\/|$)/,
];
const SDK_TRANSPORT_NAMES = new Set([
  'JsonRpcTransportHandler',
  'LegacyJsonRpcTransportHandler',
  'LegacyRestTransportHandler',
  'jsonRpcHandler',
  'restHandler',
  'agentCardHandler',
]);
const ROUTE_DECORATORS = new Set([
  'Controller',
  'Get',
  'Post',
  'Put',
  'Patch',
  'Delete',
  'All',
  'Options',
  'Head',
  'Sse',
]);

function startsWithAny(path: string, prefixes: string[]): boolean {
  return prefixes.some((p) => path.startsWith(p));
}

/** Checks one source file, given its path relative to the project root (posix separators). */
export function checkSource(file: string, text: string): Violation[] {
  const violations: Violation[] = [];
  const inBoundary = startsWithAny(file, BOUNDARY_DIRS);
  const isProbe = startsWithAny(file, PROBE_DIRS);
  const isBootstrap = BOOTSTRAP_FILES.includes(file);
  const isHttpAuth = startsWithAny(file, HTTP_AUTH_DIRS);
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);

  const visit = (node: ts.Node): void => {
    const imported = importedSpecifier(node);
    if (imported !== undefined) violations.push(...contractRules(file, imported), ...clientRules(file, imported));
    if (ts.isImportDeclaration(node) || (ts.isExportDeclaration(node) && node.moduleSpecifier)) {
      const specifier = (node.moduleSpecifier as ts.StringLiteral).text;
      if (!inBoundary && !isBootstrap && !isProbe && !isHttpAuth && HTTP_MODULES.some((re) => re.test(specifier))) {
        violations.push({ file, rule: 'no-http-outside-boundary', detail: `imports ${specifier}` });
      }
      if (!inBoundary && !isBootstrap && ts.isImportDeclaration(node)) {
        const named = node.importClause?.namedBindings;
        if (named && ts.isNamedImports(named) && specifier.startsWith('@a2a-js/sdk')) {
          for (const el of named.elements) {
            const imported = (el.propertyName ?? el.name).text;
            if (SDK_TRANSPORT_NAMES.has(imported)) {
              violations.push({
                file,
                rule: 'no-sdk-transport-outside-boundary',
                detail: `imports ${imported} from ${specifier}`,
              });
            }
          }
        }
      }
      if (!inBoundary && !isBootstrap && specifier.startsWith('.')) {
        const target = relative(process.cwd(), resolve(dirname(resolve(process.cwd(), file)), specifier))
          .split(sep)
          .join('/')
          .replace(/\.js$/, '.ts');
        if (target.startsWith('src/a2a/') && !BOUNDARY_PUBLIC_API.includes(target)) {
          violations.push({ file, rule: 'no-boundary-internals', detail: `imports ${target}` });
        }
      }
    }
    if (ts.isDecorator(node) && !inBoundary && !isProbe) {
      const expr = node.expression;
      const name =
        ts.isCallExpression(expr) && ts.isIdentifier(expr.expression)
          ? expr.expression.text
          : ts.isIdentifier(expr)
            ? expr.text
            : undefined;
      if (name && ROUTE_DECORATORS.has(name)) {
        violations.push({ file, rule: 'no-routes-outside-boundary', detail: `@${name}() defines an HTTP route` });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return violations;
}

/** The wire contract both sides share: plain TypeScript that needs nothing but itself. */
const CONTRACT_DIR = 'src/contract/';
/** The `cleveragents` client: the contract and its own files, and no server stack. */
const CLIENT_DIR = 'src/client/';
/** npm packages of the server that a client must not carry (its database, HTTP stack, agent runtime). */
const SERVER_ONLY_PACKAGES = [
  /^@nestjs\//,
  /^typeorm(\/|$)/,
  /^pg(\/|$)/,
  /^@electric-sql\/pglite(\/|$)/,
  /^@langchain\//,
  /^passport/,
  /^express(\/|$)/,
  /^@a2a-js\/sdk\/server/,
  /^@a2a-js\/sdk\/compat\/v0_3\/server/,
];

/** The module an import, a re-export or an `import()` names, if `node` is one. */
function importedSpecifier(node: ts.Node): string | undefined {
  if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
    return (node.moduleSpecifier as ts.StringLiteral).text;
  }
  if (
    ts.isCallExpression(node) &&
    (node.expression.kind === ts.SyntaxKind.ImportKeyword ||
      (ts.isIdentifier(node.expression) && node.expression.text === 'require')) &&
    node.arguments.length > 0 &&
    ts.isStringLiteralLike(node.arguments[0])
  ) {
    return node.arguments[0].text;
  }
  if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
    return node.argument.literal.text;
  }
  return undefined;
}

/** The project path (posix, `.ts`) a relative specifier of `file` names. */
function resolvedPath(file: string, specifier: string): string {
  return relative(process.cwd(), resolve(dirname(resolve(process.cwd(), file)), specifier))
    .split(sep)
    .join('/')
    .replace(/\.js$/, '.ts');
}

/** src/contract/ imports only src/contract/: no other project file, no npm package, no Node built-in. */
function contractRules(file: string, specifier: string): Violation[] {
  if (!file.startsWith(CONTRACT_DIR)) return [];
  if (specifier.startsWith('.') && resolvedPath(file, specifier).startsWith(CONTRACT_DIR)) return [];
  return [{ file, rule: 'contract-imports-only-contract', detail: `imports ${specifier}` }];
}

/** src/client/ imports src/client/, src/contract/ and npm packages that are not the server's stack. */
function clientRules(file: string, specifier: string): Violation[] {
  if (!file.startsWith(CLIENT_DIR)) return [];
  if (specifier.startsWith('.')) {
    const target = resolvedPath(file, specifier);
    return target.startsWith(CLIENT_DIR) || target.startsWith(CONTRACT_DIR)
      ? []
      : [{ file, rule: 'client-imports-client-or-contract', detail: `imports ${target}` }];
  }
  return SERVER_ONLY_PACKAGES.some((re) => re.test(specifier))
    ? [{ file, rule: 'client-no-server-packages', detail: `imports ${specifier}` }]
    : [];
}

/** A handler's method name as `@RpcMethod` gives it: a string literal, or `METHODS.<group>.<name>`. */
function rpcNameOf(argument: ts.Expression): string | undefined {
  if (ts.isStringLiteralLike(argument)) return argument.text;
  if (
    ts.isPropertyAccessExpression(argument) &&
    ts.isPropertyAccessExpression(argument.expression) &&
    ts.isIdentifier(argument.expression.expression) &&
    argument.expression.expression.text === 'METHODS'
  ) {
    const group = (METHODS as Record<string, Record<string, string> | undefined>)[argument.expression.name.text];
    return group?.[argument.name.text];
  }
  return undefined;
}

/** Every `@RpcMethod(name, …)` of a source file, in order; `undefined` for a name that cannot be read. */
export function rpcMethodNames(file: string, text: string): (string | undefined)[] {
  const names: (string | undefined)[] = [];
  const visit = (node: ts.Node): void => {
    if (
      ts.isDecorator(node) &&
      ts.isCallExpression(node.expression) &&
      ts.isIdentifier(node.expression.expression) &&
      node.expression.expression.text === 'RpcMethod'
    ) {
      const [first] = node.expression.arguments;
      names.push(first ? rpcNameOf(first) : undefined);
    }
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true));
  return names;
}

/**
 * The handlers of src/ against the contract's names: names handled that are not in `contract`
 * (or cannot be read), names of `contract` with no handler, and names with more than one.
 */
export function checkRpcNames(
  handlers: readonly { file: string; name: string | undefined }[],
  contract: readonly string[],
): { unknown: string[]; missing: string[]; duplicated: string[] } {
  const known = new Set(contract);
  const count = new Map<string, number>();
  const unknown: string[] = [];
  for (const { file, name } of handlers) {
    if (name === undefined || !known.has(name))
      unknown.push(`${file}: ${name ?? '(a name that is not a literal or METHODS.<group>.<name>)'}`);
    if (name !== undefined) count.set(name, (count.get(name) ?? 0) + 1);
  }
  return {
    unknown,
    missing: contract.filter((name) => !count.has(name)),
    duplicated: [...count].filter(([, n]) => n > 1).map(([name]) => name),
  };
}

/** Every `@RpcMethod` of src/ (spec files excepted), with its file. */
export function rpcHandlersOf(root: string): { file: string; name: string | undefined }[] {
  return sourceFiles(join(root, 'src')).flatMap((full) => {
    const file = relative(root, full).split(sep).join('/');
    return rpcMethodNames(file, readFileSync(full, 'utf8')).map((name) => ({ file, name }));
  });
}

export function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    const full = join(dir, entry);
    if (statSync(full).isDirectory()) out.push(...sourceFiles(full));
    else if (full.endsWith('.ts') && !full.endsWith('.spec.ts') && !full.endsWith('.d.ts')) out.push(full);
  }
  return out;
}

export function checkTree(root: string): { files: number; violations: Violation[] } {
  const files = sourceFiles(join(root, 'src'));
  const violations = files.flatMap((full) =>
    checkSource(relative(root, full).split(sep).join('/'), readFileSync(full, 'utf8')),
  );
  return { files: files.length, violations };
}
