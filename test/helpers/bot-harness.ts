// Drives the real bot through bot.handleUpdate, with an API transformer that records every outgoing
// call instead of sending it to Telegram; users are simulated by building updates.
import type { Bot } from 'grammy';
import type { Update, UserFromGetMe } from 'grammy/types';
import { createBot } from '../../src/bot/bot.ts';
import type { BotContext } from '../../src/bot/conversations.ts';
import type { Services } from '../../src/services.ts';

export interface ApiCall {
  method: string;
  payload: Record<string, unknown>;
}

export const BOT_INFO: UserFromGetMe = {
  id: 700000001,
  is_bot: true,
  first_name: 'Analytics',
  username: 'tma_analytics_test_bot',
  can_join_groups: false,
  can_read_all_group_messages: false,
  supports_inline_queries: false,
  can_connect_to_business: false,
  has_main_web_app: false,
  has_topics_enabled: false,
  allows_users_to_create_topics: false,
  can_manage_bots: false,
  supports_join_request_queries: false,
};

const silentLog = { warn() {}, error() {} };

export class BotHarness {
  readonly calls: ApiCall[] = [];
  readonly errors: unknown[] = [];
  bot!: Bot<BotContext>;
  private updateId = 1;
  private messageId = 1000;

  constructor(private readonly services: Services) {
    this.restart();
  }

  /** a new bot instance over the same services and database, as after a process restart */
  restart(): void {
    this.bot = createBot(this.services, {
      token: '123:test',
      botInfo: BOT_INFO,
      log: { warn: silentLog.warn, error: (object) => this.errors.push(object) },
      transformers: [
        async (_prev, method, payload) => {
          this.calls.push({ method, payload: payload as Record<string, unknown> });
          const chat = {
            id: Number((payload as { chat_id?: number }).chat_id ?? 0),
            type: 'private' as const,
            first_name: 'U',
          };
          const result =
            method.startsWith('send') || method.startsWith('edit')
              ? { message_id: this.messageId++, date: 0, chat, text: '' }
              : true;
          return { ok: true as const, result: result as never };
        },
      ],
    });
  }

  private user(id: number) {
    return { id, is_bot: false, first_name: `User${id}`, language_code: 'en' };
  }

  async send(userId: number, text: string): Promise<ApiCall[]> {
    const entities = text.startsWith('/')
      ? [{ type: 'bot_command' as const, offset: 0, length: text.split(' ')[0]!.length }]
      : undefined;
    return this.handle({
      update_id: this.updateId++,
      message: {
        message_id: this.messageId++,
        date: 0,
        chat: { id: userId, type: 'private', first_name: 'U' },
        from: this.user(userId),
        text,
        entities,
      },
    });
  }

  /** a press of a button with `data`, on a message of the bot that says `text` (Telegram sends its text along) */
  async click(userId: number, data: string, text = 'menu'): Promise<ApiCall[]> {
    return this.handle({
      update_id: this.updateId++,
      callback_query: {
        id: String(this.updateId),
        chat_instance: 'x',
        from: this.user(userId),
        data,
        message: {
          message_id: this.messageId++,
          date: 0,
          chat: { id: userId, type: 'private', first_name: 'U' },
          text,
        },
      },
    });
  }

  async handle(update: Update): Promise<ApiCall[]> {
    const before = this.calls.length;
    await this.bot.handleUpdate(update);
    return this.calls.slice(before);
  }
}

/** the text of the outgoing messages and edits of a step, joined */
export function textsOf(calls: ApiCall[]): string {
  return calls
    .filter((call) => call.method === 'sendMessage' || call.method === 'editMessageText')
    .map((call) => String(call.payload.text))
    .join('\n---\n');
}

/** every callback_data on the inline keyboards of a step */
export function buttonsOf(calls: ApiCall[]): string[] {
  return calls.flatMap((call) => {
    const markup = call.payload.reply_markup as { inline_keyboard?: { callback_data?: string }[][] } | undefined;
    return (markup?.inline_keyboard ?? []).flat().map((button) => button.callback_data ?? '');
  });
}

export function alertsOf(calls: ApiCall[]): string[] {
  return calls.filter((call) => call.method === 'answerCallbackQuery').map((call) => String(call.payload.text ?? ''));
}
