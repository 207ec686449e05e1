import ts from 'typescript';

/**
 * How module files wire: Nest builds the project's classes (providers with constructor injection), and
 * a `*.module.ts` builds none itself. A factory there may create external clients only (a DataSource,
 * pg, passport, Nest's Logger). This finds each `new` in a module file of a class the project declares:
 * one imported from a relative path (statically or by `await import('./…')`) or declared in the file.
 */
export interface ModuleNew {
  file: string;
  line: number;
  /** The constructed expression as written (`ActorBackends`, `langgraph.LangGraphActorBackend`). */
  constructed: string;
}

function isRelative(specifier: string): boolean {
  return specifier.startsWith('./') || specifier.startsWith('../');
}

/** The names a binding pattern (`{ A, b: B }`, `[c]`) or identifier binds. */
function boundNames(name: ts.BindingName): string[] {
  if (ts.isIdentifier(name)) return [name.text];
  return name.elements.flatMap((element) => (ts.isOmittedExpression(element) ? [] : boundNames(element.name)));
}

/** True when `node` contains `import('./…')` (a dynamic import of the project's own code). */
function importsProjectCode(node: ts.Node): boolean {
  let found = false;
  const visit = (child: ts.Node): void => {
    if (
      ts.isCallExpression(child) &&
      child.expression.kind === ts.SyntaxKind.ImportKeyword &&
      child.arguments.length > 0 &&
      ts.isStringLiteralLike(child.arguments[0]) &&
      isRelative(child.arguments[0].text)
    ) {
      found = true;
    }
    if (!found) ts.forEachChild(child, visit);
  };
  visit(node);
  return found;
}

/** The identifier an expression starts from (`a` of `a.b.C`), if any. */
function rootName(expression: ts.Expression): string | undefined {
  let current: ts.Expression = expression;
  while (ts.isPropertyAccessExpression(current) || ts.isParenthesizedExpression(current)) current = current.expression;
  return ts.isIdentifier(current) ? current.text : undefined;
}

/** Every `new` of a project class in one module file, given its path (for messages) and text. */
export function projectNewsInModule(file: string, text: string): ModuleNew[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const projectNames = new Set<string>();
  const collect = (node: ts.Node): void => {
    if (
      ts.isImportDeclaration(node) &&
      ts.isStringLiteral(node.moduleSpecifier) &&
      isRelative(node.moduleSpecifier.text)
    ) {
      const clause = node.importClause;
      if (clause?.name) projectNames.add(clause.name.text);
      const bindings = clause?.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings)) projectNames.add(bindings.name.text);
      if (bindings && ts.isNamedImports(bindings)) {
        for (const element of bindings.elements) projectNames.add(element.name.text);
      }
    }
    if ((ts.isClassDeclaration(node) || ts.isClassExpression(node)) && node.name) projectNames.add(node.name.text);
    if (ts.isVariableDeclaration(node) && node.initializer && importsProjectCode(node.initializer)) {
      for (const name of boundNames(node.name)) projectNames.add(name);
    }
    ts.forEachChild(node, collect);
  };
  collect(source);

  const found: ModuleNew[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isNewExpression(node)) {
      const root = rootName(node.expression);
      // `new (await import('./x.js')).X()` names no binding: its root is the import itself.
      if ((root !== undefined && projectNames.has(root)) || importsProjectCode(node.expression)) {
        found.push({
          file,
          line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1,
          constructed: node.expression.getText(source),
        });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The classes of one module file decorated `@Global()` (however `Global` was imported). */
export function globalModulesIn(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isClassDeclaration(node)) {
      const global = (ts.getDecorators(node) ?? []).some((decorator) => {
        const call = decorator.expression;
        const callee = ts.isCallExpression(call) ? call.expression : call;
        return (
          (ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : '') ===
          'Global'
        );
      });
      if (global) found.push(node.name?.text ?? '(anonymous)');
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}
