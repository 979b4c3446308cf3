import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

// The fixtures are ignored by the project's lint run (they are meant to fail); lint them here.
async function lint(file: string): Promise<ESLint.LintResult> {
  const eslint = new ESLint({ ignore: false });
  const [result] = await eslint.lintFiles([`test/fixtures/lint/workflows/${file}`]);
  if (!result) throw new Error(`no lint result for ${file}`);
  return result;
}

describe('workflow fence (eslint.config.js workflowFence)', () => {
  it('rejects a node:fs import in workflows/', async () => {
    const result = await lint('bad.ts');
    const fence = result.messages.filter((m) => m.ruleId === '@typescript-eslint/no-restricted-imports');
    expect(fence).toHaveLength(1);
    expect(fence[0]?.message).toMatch(/workflows\/ may import values only from @temporalio\/workflow/);
    expect(fence[0]?.line).toBe(2);
  });

  it('allows @temporalio/workflow values and `import type` from src/', async () => {
    const result = await lint('good.ts');
    expect(result.messages).toEqual([]);
  });

  it('rejects a default export (it would become the catch-all workflow)', async () => {
    const result = await lint('default-export.ts');
    expect(result.messages.map((m) => m.ruleId)).toContain('no-restricted-syntax');
  });

  it('applies to the real workflows/ folder', async () => {
    const eslint = new ESLint();
    const config = (await eslint.calculateConfigForFile('workflows/index.ts')) as { rules?: Record<string, unknown> };
    expect(config.rules?.['@typescript-eslint/no-restricted-imports']).toBeDefined();
  });
});
