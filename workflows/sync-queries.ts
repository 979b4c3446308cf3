import { defineQuery } from '@temporalio/workflow';
import type { StreamProgress, SyncProgress } from './sync-types.js';

/** Live progress of one stream's child workflow (pages done of total, rows, requests). */
export const progressQuery = defineQuery<StreamProgress>('progress');

/** Which streams of a run are pending, running or finished. */
export const syncProgressQuery = defineQuery<SyncProgress>('syncProgress');
