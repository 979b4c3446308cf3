/**
 * Zone-less wall times at clock changes and the instant each stands for as the CRM's PHP reads it:
 * the daylight-time instant in an hour the clocks repeat, and a time in an hour they skip moved
 * forward by the skip. The client (src/crm/timestamps.ts) and the warehouse's SQL
 * (src/warehouse/sql-expr.ts) must both give these.
 */
export const DST_WALLS: readonly (readonly [zone: string, wall: string, instant: string])[] = [
  ['America/New_York', '2025-11-02 01:30:00', '2025-11-02T05:30:00.000Z'], // EDT, not EST's 06:30Z
  ['America/New_York', '2025-11-02 00:59:59', '2025-11-02T04:59:59.000Z'],
  ['America/New_York', '2025-11-02 02:00:00', '2025-11-02T07:00:00.000Z'],
  ['America/New_York', '2026-03-08 02:30:00', '2026-03-08T07:30:00.000Z'], // 03:30 EDT
  ['America/New_York', '2026-03-08 01:59:59', '2026-03-08T06:59:59.000Z'],
  ['America/New_York', '2026-03-08 03:00:00', '2026-03-08T07:00:00.000Z'],
  ['Europe/Berlin', '2025-10-26 02:30:00', '2025-10-26T00:30:00.000Z'], // CEST, not CET's 01:30Z
  ['Europe/Berlin', '2025-03-30 02:30:00', '2025-03-30T01:30:00.000Z'], // 03:30 CEST
  ['Australia/Sydney', '2025-04-06 02:30:00', '2025-04-05T15:30:00.000Z'], // AEDT, not AEST's 16:30Z
  ['Australia/Sydney', '2025-10-05 02:30:00', '2025-10-04T16:30:00.000Z'], // 03:30 AEDT
  ['Australia/Lord_Howe', '2025-04-06 01:45:00', '2025-04-05T14:45:00.000Z'], // +11, then +10:30
  ['Australia/Lord_Howe', '2025-10-05 02:15:00', '2025-10-04T15:45:00.000Z'], // 02:45 +11: half an hour skipped
  ['Asia/Kolkata', '2025-10-26 02:30:00', '2025-10-25T21:00:00.000Z'], // no change
];
