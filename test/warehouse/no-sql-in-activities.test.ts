import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ACTIVITIES = join(import.meta.dirname, '../../activities');
// A statement keyword at the start of a string literal: how SQL text looks in TypeScript.
const SQL = /[`'"]\s*(SELECT|INSERT|UPDATE|DELETE|WITH|CREATE|DROP|ALTER|MERGE|COPY)\s/i;

describe('SQL stays in src/warehouse', () => {
  it('no activities/*.ts file holds a SQL statement', () => {
    const offenders = readdirSync(ACTIVITIES)
      .filter((f) => f.endsWith('.ts'))
      .flatMap((f) =>
        readFileSync(join(ACTIVITIES, f), 'utf8')
          .split('\n')
          .map((line, i) => ({ where: `activities/${f}:${i + 1}`, line }))
          .filter(({ line }) => SQL.test(line)),
      )
      .map(({ where, line }) => `${where}: ${line.trim()}`);
    expect(offenders, 'move these statements into a named function in src/warehouse').toEqual([]);
  });
});
