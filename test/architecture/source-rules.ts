import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import ts from 'typescript';
import { METHODS } from '../../packages/contract/src/methods.js';

/**
 * What import rules cannot see (those are in .dependency-cruiser.cjs): who may use the SDK's transport
 * handlers by name, who may define HTTP routes, and that the handlers' names are the contract's.
 */
export interface Violation {
  file: string;
  rule: string;
  detail: string;
}

/** The protocol boundary: the transport and the SDK's request handler. */
const BOUNDARY_DIRS = ['src/a2a/'];
/** Operational probes and the web console's static files: routes, but no client API. */
const PROBE_DIRS = ['src/health/', 'src/metrics/', 'src/console/'];
/** Bootstrap files wire everything together. */
const BOOTSTRAP_FILES = ['src/main.ts', 'src/server.ts', 'src/stdio.ts', 'src/app.factory.ts', 'src/app.module.ts'];

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
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);

  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && !inBoundary && !isBootstrap) {
      const specifier = (node.moduleSpecifier as ts.StringLiteral).text;
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
      const first = node.expression.arguments.at(0);
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
    if (name === undefined || !known.has(name)) {
      unknown.push(`${file}: ${name ?? '(a name that is not a literal or METHODS.<group>.<name>)'}`);
    }
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
    else if (/\.tsx?$/.test(full) && !/\.spec\.tsx?$/.test(full) && !full.endsWith('.d.ts')) out.push(full);
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
