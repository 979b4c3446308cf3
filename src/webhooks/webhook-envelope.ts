import { z } from 'zod';

const numericId = z.union([
  z.number().int().nonnegative(),
  z
    .string()
    .regex(/^\d{1,15}$/)
    .transform(Number),
]);

/**
 * The body of an outbound delivery (spec, Events: Payload). Validated only after the signature
 * matched; `data` stays loose here because its shape depends on the event and is read by the
 * applier, which tolerates missing keys.
 */
export const WebhookEnvelope = z.object({
  event: z
    .string()
    .min(1)
    .max(100)
    .regex(/^[a-z0-9_.-]+$/i),
  timestamp: z
    .string()
    .max(40)
    .refine((s) => Number.isFinite(Date.parse(s)), 'timestamp must be an ISO 8601 date'),
  webhook_id: numericId,
  data: z.record(z.string(), z.unknown()),
  signature: z.string().max(200).optional(),
});

export type WebhookEnvelope = z.infer<typeof WebhookEnvelope>;
