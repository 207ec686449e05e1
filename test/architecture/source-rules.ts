import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, dirname, sep } from 'node:path';
import ts from 'typescript';

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
/** What a domain module may use of the boundary: the handler decorator, the call context, version facts. */
const BOUNDARY_PUBLIC_API = [
  'src/a2a/rpc-method.decorator.ts',
  'src/a2a/rpc-context.ts',
  'src/a2a/protocol-version.ts',
];

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
