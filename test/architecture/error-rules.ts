import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import ts from 'typescript';

/**
 * Where domain errors are built: each domain declares its errors, with their reasons, in a `*.errors.ts`
 * file next to it; everywhere else throws what those files' factories return.
 */
export interface InlineError {
  file: string;
  line: number;
  error: string;
  reason: string;
}

const DOMAIN_ERRORS_FILE = 'src/common/domain.errors.ts';
const REASON_LITERAL = /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/;

/** The classes of src/common/domain.errors.ts that extend DomainError, read from its source. */
export function domainErrorClasses(root: string): Set<string> {
  const text = readFileSync(join(root, DOMAIN_ERRORS_FILE), 'utf8');
  const source = ts.createSourceFile(DOMAIN_ERRORS_FILE, text, ts.ScriptTarget.Latest, true);
  const names = new Set<string>();
  for (const statement of source.statements) {
    if (!ts.isClassDeclaration(statement) || !statement.name) continue;
    const base = statement.heritageClauses?.[0]?.types[0]?.expression;
    if (base && ts.isIdentifier(base) && base.text === 'DomainError') names.add(statement.name.text);
  }
  return names;
}

/** The non-test TypeScript files under src/, as paths relative to `root` with `/` separators. */
export function sourceFiles(root: string, dir = join(root, 'src')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(root, path);
    if (!/\.tsx?$/.test(entry.name) || /\.(spec|e2e-spec)\.tsx?$/.test(entry.name)) return [];
    return [relative(root, path).split(sep).join('/')];
  });
}

function literalText(node: ts.Node | undefined): string | undefined {
  if (node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node))) return node.text;
  return undefined;
}

/** Reasons written as literals anywhere in `node`'s arguments (an error's reason is one of its arguments). */
function reasonLiterals(node: ts.NewExpression | ts.CallExpression): string[] {
  const found: string[] = [];
  const visit = (n: ts.Node): void => {
    const text = literalText(n);
    if (text !== undefined && REASON_LITERAL.test(text) && text.includes('_')) found.push(text);
    ts.forEachChild(n, visit);
  };
  for (const arg of node.arguments ?? []) visit(arg);
  return found;
}

/** Every `new <DomainError>(…)` of `text` that writes a reason as a literal, with the reason. */
export function errorsWithReasons(file: string, text: string, classes: Set<string>): InlineError[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: InlineError[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && classes.has(node.expression.text)) {
      const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
      for (const reason of reasonLiterals(node)) found.push({ file, line, error: node.expression.text, reason });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Domain errors with a reason literal built outside a `*.errors.ts` file: each is a violation. */
export function inlineDomainErrors(file: string, text: string, classes: Set<string>): InlineError[] {
  return file.endsWith('.errors.ts') ? [] : errorsWithReasons(file, text, classes);
}

/**
 * The reasons `text` raises: those of its domain errors, of `super(message, REASON, …)` in the error classes,
 * and those handed to the boundary's `protocolError(code, message, REASON)` and `errorInfo(REASON)`.
 */
export function reasonsRaised(file: string, text: string, classes: Set<string>): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found = errorsWithReasons(file, text, classes).map((e) => e.reason);
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const name = ts.isIdentifier(callee) ? callee.text : callee.kind === ts.SyntaxKind.SuperKeyword ? 'super' : '';
      const at = { super: 1, protocolError: 2, errorInfo: 0 }[name];
      const reason = at === undefined ? undefined : literalText(node.arguments[at]);
      if (reason !== undefined && REASON_LITERAL.test(reason)) found.push(reason);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}
