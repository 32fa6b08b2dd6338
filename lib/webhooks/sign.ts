// The signature of a delivery: `X-Signature: sha256=<hex HMAC-SHA256(secret, timestamp + "." +
// body)>` with `X-Timestamp` in unix seconds. The timestamp is inside the signed text, so a
// receiver that refuses old timestamps is safe from replays of recorded deliveries.
import { createHmac, timingSafeEqual } from 'node:crypto';

export function signatureOf(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** What a receiver does: true when `signature` is the secret's signature of the timestamp and body. */
export function verifySignature(secret: string, timestamp: string, body: string, signature: string): boolean {
  if (!/^\d{1,12}$/.test(timestamp)) return false;
  const expected = Buffer.from(signatureOf(secret, Number(timestamp), body));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
