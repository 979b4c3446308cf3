/**
 * Which capability a route needs, from the interface's capability table and its named routes.
 * Used to turn a 403 into a message that says what to grant the API user.
 */
const RULES: ReadonlyArray<{ test: RegExp; methods?: RegExp; caps: readonly string[] }> = [
  { test: /^\/reports\/automations\/\d+\/steps/, caps: ['crm_view_dashboard'] },
  { test: /^\/funnels\/\d+\/subscribers/, methods: /^GET$/, caps: ['crm_read_funnels', 'crm_write_funnels'] },
  { test: /^\/campaigns\/\d+\/status/, caps: ['crm_read_emails', 'crm_manage_emails'] },
  { test: /^\/webhooks\/\d+$/, methods: /^DELETE$/, caps: ['crm_manage_settings'] },
  { test: /^\/reports(\/|$)/, caps: ['crm_view_dashboard'] },
  { test: /^\/subscribers\/\d+$/, methods: /^DELETE$/, caps: ['crm_manage_contacts_delete'] },
  { test: /^\/subscribers/, methods: /^GET$/, caps: ['crm_read_contacts', 'crm_manage_contacts'] },
  { test: /^\/subscribers/, caps: ['crm_manage_contacts'] },
  { test: /^\/(tags|lists|companies)(\/\d+)?$/, methods: /^DELETE$/, caps: ['crm_manage_contact_cats_delete'] },
  { test: /^\/(tags|lists|companies|custom-fields)/, caps: ['crm_manage_contact_cats'] },
  { test: /^\/(campaigns|sequences)\/\d+$/, methods: /^DELETE$/, caps: ['crm_manage_email_delete'] },
  { test: /^\/(campaigns|sequences)/, methods: /^GET$/, caps: ['crm_read_emails', 'crm_manage_emails'] },
  { test: /^\/(campaigns|sequences)/, caps: ['crm_manage_emails'] },
  { test: /^\/templates/, caps: ['crm_manage_email_templates'] },
  { test: /^\/funnels\/\d+$/, methods: /^DELETE$/, caps: ['crm_delete_funnels'] },
  { test: /^\/funnels/, methods: /^GET$/, caps: ['crm_read_funnels', 'crm_write_funnels'] },
  { test: /^\/funnels/, caps: ['crm_write_funnels'] },
  { test: /^\/webhooks/, caps: ['crm_manage_settings'] },
  { test: /^\/forms/, caps: ['crm_manage_forms'] },
  { test: /^\/(setting|settings)/, caps: ['crm_manage_settings'] },
];

/** Capabilities of which the user needs one for `method path` (path relative to the base URL). */
export function capabilitiesFor(method: string, path: string): readonly string[] {
  const m = method.toUpperCase();
  for (const r of RULES) {
    if (r.test.test(path) && (!r.methods || r.methods.test(m))) return r.caps;
  }
  return [];
}
