import type { WarehouseHandle } from '../src/warehouse/index.js';

/** Wraps the warehouse connection's statement methods so every call reports its SQL, wall and CPU ms. */
export function timeStatements(w: WarehouseHandle, onStatement: (sql: string, ms: number, cpuMs: number) => void): void {
  const c = w.connection as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
  for (const m of ['run', 'runAndReadAll', 'createAppender']) {
    const orig = c[m]!.bind(w.connection);
    c[m] = async (...a: unknown[]) => {
      const t = performance.now();
      const cpu = process.cpuUsage();
      try {
        return await orig(...a);
      } finally {
        const u = process.cpuUsage(cpu);
        onStatement(String(a[0]).replace(/\s+/g, ' '), performance.now() - t, (u.user + u.system) / 1000);
      }
    };
  }
}
