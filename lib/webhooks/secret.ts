// The key webhook deliveries are signed with: WEBHOOK_SECRET, else DATA_DIR/webhook-secret,
// generated owner-only on first start. Nodes sharing DATA_DIR sign with the same key, so a
// receiver checks every node's deliveries with one secret.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { createOnce } from '../create-once.js';
import type { Config } from '../config.js';

export const SECRET_FILE = 'webhook-secret';

export interface WebhookSecret {
  /** The key's text: the HMAC key is its UTF-8 bytes. */
  secret: string;
  /** The file it came from, or null when from the environment. */
  file: string | null;
}

export function resolveWebhookSecret(config: Pick<Config, 'webhookSecret' | 'dataDir'>): WebhookSecret {
  if (config.webhookSecret) return { secret: config.webhookSecret, file: null };
  const file = path.join(config.dataDir, SECRET_FILE);
  // 256 random bits as hex: a receiver pastes the file's one line into its configuration.
  const text = createOnce(file, randomBytes(32).toString('hex') + '\n');
  return { secret: text.trim(), file };
}
