import type { EntityTable } from './types.js';

export type ColumnType = 'BIGINT' | 'VARCHAR' | 'BOOLEAN' | 'DOUBLE' | 'DATE' | 'TIMESTAMPTZ' | 'JSON' | 'VARCHAR[]';

export interface RowSpec {
  table: string;
  key: readonly string[];
  /** Typed columns, in table order, excluding raw and the `_` bookkeeping columns. */
  columns: readonly (readonly [string, ColumnType])[];
  /** Rows absent from a complete read: tombstoned (`_deleted_at`) or removed. */
  absent: 'tombstone' | 'delete';
}

const ts = 'TIMESTAMPTZ' as const;
const taxonomy = [
  ['id', 'BIGINT'],
  ['title', 'VARCHAR'],
  ['slug', 'VARCHAR'],
  ['description', 'VARCHAR'],
] as const;
const counts = [
  ['total_count', 'BIGINT'],
  ['subscribers_count', 'BIGINT'],
  ['created_at', ts],
  ['updated_at', ts],
] as const;

export const ENTITY_SPECS: Record<EntityTable, RowSpec> = {
  tags: { table: 'tags', key: ['id'], absent: 'tombstone', columns: [...taxonomy, ...counts] },
  lists: { table: 'lists', key: ['id'], absent: 'tombstone', columns: [...taxonomy, ['is_public', 'BOOLEAN'], ...counts] },
  companies: {
    table: 'companies',
    key: ['id'],
    absent: 'tombstone',
    columns: [
      ['id', 'BIGINT'],
      ['name', 'VARCHAR'],
      ['industry', 'VARCHAR'],
      ['website', 'VARCHAR'],
      ['email', 'VARCHAR'],
      ['phone', 'VARCHAR'],
      ['type', 'VARCHAR'],
      ['owner_id', 'BIGINT'],
      ['employees_number', 'BIGINT'],
      ['status', 'VARCHAR'],
      ['city', 'VARCHAR'],
      ['country', 'VARCHAR'],
      ['created_at', ts],
      ['updated_at', ts],
    ],
  },
  custom_fields: {
    table: 'custom_fields',
    key: ['slug'],
    absent: 'tombstone',
    columns: [
      ['slug', 'VARCHAR'],
      ['label', 'VARCHAR'],
      ['type', 'VARCHAR'],
      ['field_key', 'VARCHAR'],
      ['options', 'VARCHAR[]'],
    ],
  },
  campaigns: {
    table: 'campaigns',
    key: ['id'],
    absent: 'tombstone',
    columns: [
      ['id', 'BIGINT'],
      ['title', 'VARCHAR'],
      ['slug', 'VARCHAR'],
      ['status', 'VARCHAR'],
      ['email_subject', 'VARCHAR'],
      ['email_pre_header', 'VARCHAR'],
      ['recipients_count', 'BIGINT'],
      ['scheduled_at', ts],
      ['design_template', 'VARCHAR'],
      ['created_at', ts],
      ['updated_at', ts],
      ['stats', 'JSON'],
    ],
  },
  funnels: {
    table: 'funnels',
    key: ['id'],
    absent: 'tombstone',
    columns: [
      ['id', 'BIGINT'],
      ['title', 'VARCHAR'],
      ['trigger_name', 'VARCHAR'],
      ['status', 'VARCHAR'],
      ['subscribers_count', 'BIGINT'],
      ['created_at', ts],
      ['updated_at', ts],
    ],
  },
};

export const FUNNEL_SUBSCRIBER_SPEC: RowSpec = {
  table: 'funnel_subscribers',
  key: ['funnel_id', 'id'],
  absent: 'delete',
  columns: [
    ['id', 'BIGINT'],
    ['funnel_id', 'BIGINT'],
    ['subscriber_id', 'BIGINT'],
    ['status', 'VARCHAR'],
    ['last_sequence_id', 'BIGINT'],
    ['next_sequence_id', 'BIGINT'],
    ['next_execution_time', ts],
    ['created_at', ts],
    ['updated_at', ts],
    ['metrics', 'JSON'],
  ],
};
