import type { ContactCore } from './seed-data.js';

/** Whether a contact (its status and memberships) is in a campaign's segment now. */
export type SegmentTest = (c: ContactCore) => boolean;

/** PHP's truthiness of a settings value: null, '', 0 and '0' are empty. */
const empty = (v: unknown): boolean => v === undefined || v === null || v === '' || v === 0 || v === '0' || v === false;

function rowsOf(raw: unknown): Record<string, unknown>[] {
  const items = Array.isArray(raw) ? raw : raw !== null && typeof raw === 'object' ? Object.values(raw) : [];
  return items.filter((r): r is Record<string, unknown> => r !== null && typeof r === 'object');
}

/**
 * The plugin's Campaign::getSubscribeIdsByListModel without its status clause: a row needs both a
 * list and a tag (`all` for either side), rows are alternatives, and a row of `all`/`all`, or no
 * usable row at all, puts no constraint on the contact.
 */
function rowsTest(raw: unknown): SegmentTest {
  const groups: { list?: number; tag?: number }[] = [];
  for (const row of rowsOf(raw)) {
    if (empty(row.list) || empty(row.tag)) continue;
    if (row.list === 'all' && row.tag === 'all') return () => true;
    groups.push({ ...(row.list === 'all' ? {} : { list: Number(row.list) }), ...(row.tag === 'all' ? {} : { tag: Number(row.tag) }) });
  }
  if (groups.length === 0) return () => true;
  return (c) => groups.some((g) => (g.list === undefined || c.lists.includes(g.list)) && (g.tag === undefined || c.tags.includes(g.tag)));
}

/**
 * The contacts a campaign's `settings` select, as fluentcrm-2.9's Campaign::getSubscribersModel
 * does for the `list_tag` filter: subscribed contacts matching `subscribers`, less those matching
 * `excludedSubscribers`. An exclusion applies when one of its rows names a list or a tag; like
 * the plugin, a row naming only one side then excludes every subscribed contact. The other
 * filters (dynamic segments, advanced filters) are pro features the simulator's campaigns do not
 * use: they select no one here.
 */
export function segmentSelector(settings: Record<string, unknown> | undefined): SegmentTest {
  if ((settings?.sending_filter ?? 'list_tag') !== 'list_tag') return () => false;
  const include = rowsTest(settings?.subscribers);
  const excludes = rowsOf(settings?.excludedSubscribers).some((r) => !empty(r.list) || !empty(r.tag));
  const exclude = excludes ? rowsTest(settings?.excludedSubscribers) : () => false;
  return (c) => c.status === 'subscribed' && include(c) && !exclude(c);
}
