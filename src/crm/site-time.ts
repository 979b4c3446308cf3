/** A formatter of an instant's wall-clock fields (24-hour, two digits) in `timeZone`. */
export function wallClockFormatter(timeZone: string): Intl.DateTimeFormat {
  return new Intl.DateTimeFormat('en-CA', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
}

/** Formats an instant as the CRM's zone-less `YYYY-MM-DD HH:MM:SS` in the site's time zone. */
export function formatSiteTime(ms: number, timeZone: string): string {
  const p: Record<string, string> = {};
  for (const x of wallClockFormatter(timeZone).formatToParts(new Date(ms))) p[x.type] = x.value;
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`;
}
