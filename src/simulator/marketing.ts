import type { CampaignRec } from './model.js';
import type { SimState } from './state.js';

/** Campaigns, funnels, templates and sequences (filled in below the contact core). */
export class Marketing {
  readonly campaigns = new Map<number, CampaignRec>();
  constructor(readonly state: SimState) {}

  recordEmail(_event: string, _contactId: number, _campaignId?: number): void {}

  truth(): { campaigns: Record<string, unknown>[]; funnels: Record<string, unknown>[]; funnelSubscribers: Record<string, unknown>[]; templates: Record<string, unknown>[]; sequences: Record<string, unknown>[] } {
    return { campaigns: [], funnels: [], funnelSubscribers: [], templates: [], sequences: [] };
  }
}
