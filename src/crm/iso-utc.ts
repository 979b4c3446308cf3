const TWO = Array.from({ length: 100 }, (_, i) => (i < 10 ? `0${i}` : String(i)));

/**
 * `new Date(ms).toISOString()` by arithmetic (days to civil date after H. Hinnant), about three times
 * faster: zone-less CRM timestamps in a site zone are converted twice per contact row. Years outside
 * 1000-9999 (and NaN, which throws as toISOString does) take toISOString itself.
 */
export function formatIsoUtc(ms: number): string {
  const days = Math.floor(ms / 86_400_000);
  const inDay = ms - days * 86_400_000;
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  if (!(year >= 1000 && year <= 9999)) return new Date(ms).toISOString();
  const milli = inDay % 1000;
  return `${year}-${TWO[month]}-${TWO[day]}T${TWO[Math.floor(inDay / 3_600_000)]}:${TWO[Math.floor(inDay / 60_000) % 60]}:${TWO[Math.floor(inDay / 1000) % 60]}.${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
}
