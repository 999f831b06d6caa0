// Where the bot keeps conversation state: the bot_state table, keyed by a hash of the chat id,
// so a conversation survives a restart and no raw Telegram id is written.
import type { StorageAdapter } from 'grammy';
import type { PrismaClient } from '../db/store.ts';

export function databaseStateStorage<T>(prisma: PrismaClient): StorageAdapter<T> {
  return {
    async read(key) {
      const row = await prisma.botState.findUnique({ where: { key } });
      return row ? (row.value as T) : undefined;
    },
    async write(key, value) {
      const json = value as object;
      await prisma.botState.upsert({ where: { key }, create: { key, value: json }, update: { value: json } });
    },
    async delete(key) {
      await prisma.botState.deleteMany({ where: { key } });
    },
  };
}
