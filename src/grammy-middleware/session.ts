// Session ids for bot events: one stable id per user per UTC day, so a busy chat counts as one session, not one per message.
import crypto from 'node:crypto';

/**
 * Keyed with the server key, which the service keeps only as a hash: a plain hash of a Telegram id would let anyone
 * who reads the stored session ids recover the id by trying every possible one.
 */
export function dailySessionId(secret: string, userId: number, at: number): string {
  const day = new Date(at).toISOString().slice(0, 10);
  const hex = crypto.createHmac('sha256', secret).update(`${userId}:${day}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
