import type { RouteCtx, RouteDef, SimResponse } from '../http-types.js';
import { ok } from '../http-types.js';
import { readPaging } from '../paging.js';
import { unit } from '../rng.js';
import { SEED_EPOCH_MS } from '../seed-data.js';
import { SimError } from '../sim-error.js';

interface FormEntry {
  id: number;
  serial_number: number;
  user_id: number;
  status: string;
  created_at: string;
  browser: string;
  device: string;
  ip: string;
  entry_url: string;
  response: Record<string, string>;
}

const FORMS = [
  { id: 1, title: 'Contact us' },
  { id: 2, title: 'Webinar sign-up' },
];

/** Entries of a seeded form, derived from the first contacts (the form plugin is simulated as installed). */
function entries(ctx: RouteCtx, formId: number): FormEntry[] {
  const out: FormEntry[] = [];
  const seed = ctx.state.opts.seed;
  const n = Math.min(ctx.state.contacts.size, formId === 1 ? 37 : 12);
  for (let i = 0; i < n; i++) {
    const c = ctx.state.contact(ctx.state.contacts.idAt(i));
    if (!c) continue;
    const r = unit(seed ^ formId, i);
    out.push({
      id: formId * 1000 + i + 1,
      serial_number: i + 1,
      user_id: 0,
      status: r < 0.8 ? 'read' : 'unread',
      created_at: ctx.ser.ts(SEED_EPOCH_MS - (n - i) * 86_400_000) as string,
      browser: r < 0.5 ? 'Chrome' : 'Firefox',
      device: r < 0.7 ? 'desktop' : 'mobile',
      ip: `203.0.113.${(i % 250) + 1}`,
      entry_url: `https://example.test/forms/${formId}`,
      response: { email: c.email, names: [c.firstName, c.lastName].filter(Boolean).join(' '), message: `Hello from ${c.city ?? 'somewhere'}` },
    });
  }
  return out.reverse();
}

function formEntries(ctx: RouteCtx): SimResponse {
  const form = FORMS.find((f) => f.id === Number(ctx.params.id));
  if (!form) throw new SimError(404, 'rest_post_invalid_id', 'Invalid form ID.');
  const paging = readPaging(ctx, 10);
  const search = (ctx.query.get('search') ?? '').toLowerCase().slice(0, 200);
  const rows = entries(ctx, form.id).filter((e) => !search || e.status === search || Object.values(e.response).some((v) => v.toLowerCase().includes(search)));
  const offset = (paging.page - 1) * paging.perPage;
  return ok({
    entries: { data: rows.slice(offset, offset + paging.perPage), page: paging.page, per_page: paging.perPage, total: rows.length, last_page: Math.max(1, Math.ceil(rows.length / paging.perPage)) },
    form,
  });
}

export const formRoutes: RouteDef[] = [{ method: 'GET', path: '/forms/:id/entries', caps: ['crm_manage_forms'], handler: formEntries }];
