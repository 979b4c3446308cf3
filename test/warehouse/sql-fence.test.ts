import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * SQL lives only in src/warehouse and sql/ (DESIGN.md): no other production file may hold a SQL
 * statement in a string or import @duckdb/node-api. test/, bench/ and scripts/ may.
 */
const ROOT = join(import.meta.dirname, '../..');
const FENCED = ['src', 'activities', 'workflows'];
const HOME = 'src/warehouse/';

/**
 * Files whose SQL is shown to the user, not run by crmsync. Each entry must still offend, so a
 * file that no longer needs the allowance cannot stay listed.
 */
const ALLOWED = new Set([
  'src/cli/query.ts', // the example query in the command's help
]);

/** Statement shapes, upper case as this codebase writes SQL; prose such as "a SELECT query" does not match. */
const STATEMENT =
  /\bSELECT\s+(DISTINCT\s+)?[\w*"(][\s\S]*?\bFROM\s+[\w"(]|\bINSERT\s+(OR\s+\w+\s+)?INTO\b|\bUPDATE\s+[\w"]+\s+SET\b|\bDELETE\s+FROM\b|\bCREATE\s+(OR\s+REPLACE\s+)?(TEMP\w*\s+)?(TABLE|VIEW|INDEX|MACRO|SCHEMA|SEQUENCE)\b|\bCOPY\s+[\w"(]|\bATTACH\s+'|\bSET\s+\w+\s*=|\bCHECKPOINT\b|\bBEGIN\s+TRANSACTION\b/;

/** Why a file breaks the fence, or [] when it does not. */
function offences(path: string, text: string): string[] {
  const out: string[] = [];
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      if (node.moduleSpecifier.text === '@duckdb/node-api') out.push(`imports @duckdb/node-api`);
      return;
    }
    let literal: string | undefined;
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) literal = node.text;
    else if (ts.isTemplateExpression(node)) literal = [node.head.text, ...node.templateSpans.map((s) => s.literal.text)].join(' x ');
    if (literal !== undefined && STATEMENT.test(literal)) {
      const { line } = source.getLineAndCharacterOfPosition(node.getStart());
      out.push(`SQL on line ${line + 1}: ${literal.replace(/\s+/g, ' ').slice(0, 60)}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

function productionFiles(): string[] {
  const files: string[] = [];
  for (const dir of FENCED) {
    for (const entry of readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })) {
      if (entry.isFile() && entry.name.endsWith('.ts')) files.push(relative(ROOT, join(entry.parentPath, entry.name)));
    }
  }
  return files.sort();
}

describe('SQL only in src/warehouse and sql/', () => {
  it('tells SQL from prose about SQL', () => {
    expect(offences('a.ts', 'const q = `SELECT count(*) AS n FROM ${table}`;')).toHaveLength(1);
    expect(offences('a.ts', "run('DELETE FROM _sweep_seen');")).toHaveLength(1);
    expect(offences('a.ts', "import { DuckDBInstance } from '@duckdb/node-api';")).toEqual(['imports @duckdb/node-api']);
    expect(offences('a.ts', 'w.run(`SET threads = ${n}`);')).toHaveLength(1);
    expect(offences('a.ts', "throw new Error('--from is a table or view name, or a SELECT query');")).toEqual([]);
    expect(offences('a.ts', "const m = 'a query starting with SELECT, WITH or FROM';")).toEqual([]);
    expect(offences('a.ts', '// SELECT * FROM contacts in a comment says why, and is no statement')).toEqual([]);
  });

  it('no file outside src/warehouse holds SQL or imports @duckdb/node-api', () => {
    const found: Record<string, string[]> = {};
    for (const file of productionFiles()) {
      if (file.startsWith(HOME) || ALLOWED.has(file)) continue;
      const o = offences(file, readFileSync(join(ROOT, file), 'utf8'));
      if (o.length > 0) found[file] = o;
    }
    expect(found, 'move these statements into a named function in src/warehouse/').toEqual({});
  });

  it('every file allowed for now still needs the allowance', () => {
    const stale = [...ALLOWED].filter((file) => offences(file, readFileSync(join(ROOT, file), 'utf8')).length === 0);
    expect(stale, 'these files hold no SQL any more: drop them from ALLOWED').toEqual([]);
  });
});
