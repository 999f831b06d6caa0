// POST <path of BOT_WEBHOOK_URL>: the management bot's updates from Telegram in webhook mode, handled by grammY's
// webhookCallback. A call without Telegram's secret header is refused before its body is read and before the bot
// (or Telegram) is touched.
import crypto from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import { type Bot, webhookCallback } from 'grammy';
import type { BotContext } from './context.ts';

export interface BotWebhookOptions {
  bot: Bot<BotContext>;
  /** the path of BOT_WEBHOOK_URL */
  path: string;
  /** what Telegram sends in X-Telegram-Bot-Api-Secret-Token, as registered with setWebhook */
  secret: string;
}

export const SECRET_HEADER = 'x-telegram-bot-api-secret-token';

const sameSecret = (given: unknown, secret: string) => {
  if (typeof given !== 'string') return false;
  const [a, b] = [Buffer.from(given), Buffer.from(secret)];
  return a.length === b.length && crypto.timingSafeEqual(a, b);
};

export const botWebhookRoute: FastifyPluginAsync<BotWebhookOptions> = async (app, { bot, path, secret }) => {
  // an update still being handled after 10 s is answered anyway: Telegram would otherwise send it again, and a
  // dialog step must not run twice
  const handle = webhookCallback(bot, 'fastify', { secretToken: secret, onTimeout: 'return' });
  app.post(
    path,
    {
      schema: { hide: true },
      // before the body is read: a caller without the secret costs no parsing of up to the body limit
      onRequest: async (request, reply) => {
        if (!sameSecret(request.headers[SECRET_HEADER], secret))
          return reply.code(401).send({ message: 'Unauthorized' });
      },
    },
    async (request, reply) => {
      if (typeof request.body !== 'object' || request.body === null || Array.isArray(request.body)) {
        reply.code(400);
        return { message: 'The body must be a Telegram update.' };
      }
      return handle(request, reply);
    },
  );
};
