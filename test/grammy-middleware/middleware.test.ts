// The grammY middleware end to end: a real grammY bot polls a Bot API emulator (telegram-test-api) and sends
// /start payloads, commands, Stars payments and refunds through the middleware (from source and from the built
// package) to the real service with a server key, its bot's id with them; the bot's own handlers always answer, even
// with the service down.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Bot, type Context } from 'grammy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { botEventOf } from '../../src/grammy-middleware/events.ts';
import { type AnalyticsMiddleware, type AnalyticsOptions, analytics } from '../../src/grammy-middleware/index.ts';
import { dailySessionId } from '../../src/grammy-middleware/session.ts';
import { SESSION_ID_PATTERN } from '../../src/events/request/schema.ts';
import {
  GRAMMY_DIR,
  GRAMMY_PACKAGE_DIR,
  GRAMMY_TARBALL,
  SDK_PACKAGE_VERSION,
} from '../../src/sdk-serving/sdk-files.ts';
import { OPERATOR } from '../../src/tokens/registry.ts';
import { startTelegramEmulator, type TelegramServer } from '../helpers/telegram-emulator.ts';
import { freePort } from '../helpers/service-process.ts';
import { startTestService, tempDir, type TestService } from '../helpers/service.ts';

const APP = 'grammy_app';
/** Telegram ids that must appear nowhere in the store */
const USER = 987654321;
const PACKAGE_USER = 876543219;

let telegram: TelegramServer;
let service: TestService;
let serverKey: string;

beforeAll(async () => {
  telegram = await startTelegramEmulator();
  service = await startTestService();
  await service.createApp(APP);
  ({ key: serverKey } = await service.services.serverKeys.create(APP, OPERATOR));
});
afterAll(async () => {
  await service?.close();
  await telegram?.stop();
});

interface RunningBot {
  client: ReturnType<TelegramServer['getClient']>;
  /** errors that reached the bot's error handler: the middleware must add none */
  errors: unknown[];
  /** sends through the emulator and waits for the bot's answer */
  say(message: Record<string, unknown>, command?: boolean): Promise<string>;
  stop(): Promise<void>;
}

/** a real grammY bot with the middleware first, then handlers that answer each kind of message */
async function startBot(token: string, userId: number, middleware: AnalyticsMiddleware<Context>): Promise<RunningBot> {
  const bot = new Bot(token, { client: { apiRoot: telegram.config.apiURL } });
  const errors: unknown[] = [];
  bot.catch((error) => errors.push(error));
  bot.use(middleware);
  bot.command('start', (ctx) => ctx.reply(`welcome ${ctx.match}`));
  bot.command('help', (ctx) => ctx.reply('help text'));
  bot.on('message:successful_payment', (ctx) => ctx.reply('thanks for paying'));
  bot.on('message:refunded_payment', (ctx) => ctx.reply('refunded'));
  bot.on('message:text', (ctx) => ctx.reply(`echo ${ctx.message.text}`));
  void bot.start({ onStart: () => {} });
  const client = telegram.getClient(token, {
    userId,
    chatId: userId,
    type: 'private',
    firstName: 'Dana',
    userName: 'dana',
  });
  const answers = () => telegram.storage.botMessages.filter((update) => update.botToken === token);
  return {
    client,
    errors,
    async say(message, command = false) {
      const before = answers().length;
      await (command ? client.sendCommand(message as never) : client.sendMessage(message as never));
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline) {
        const now = answers();
        if (now.length > before) return String(now[now.length - 1]!.message.text);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      throw new Error('the bot did not answer');
    },
    async stop() {
      await bot.stop();
    },
  };
}

const payment = (total_amount: number, invoice_payload: string) => ({
  currency: 'XTR',
  total_amount,
  invoice_payload,
  telegram_payment_charge_id: `charge-${invoice_payload}`,
  provider_payment_charge_id: '',
});

interface StoredEvent {
  event_name: string;
  start_param: string | null;
  session_id: string;
  platform: string | null;
  locale: string | null;
  is_premium: boolean;
  custom_data: Record<string, unknown> | null;
  text: string;
}

async function storedEvents(where: string): Promise<StoredEvent[]> {
  await service.loaded();
  return service.store.sql.query<StoredEvent>(
    `SELECT e.event_name, e.start_param, e.session_id::text AS session_id, e.platform, e.locale, e.is_premium,
            e.props->'custom_data' AS custom_data, row_to_json(e)::text AS text
     FROM events e JOIN apps a ON a.id = e.app_id WHERE a.app_name = '${APP}' AND ${where} ORDER BY e.occurred_at`,
  );
}

const options = (overrides: Partial<AnalyticsOptions> = {}): AnalyticsOptions => ({
  serverKey,
  appName: APP,
  endpoint: `${service.url}/`,
  ...overrides,
});

describe('tma-analytics-grammy', () => {
  it('records /start payloads, commands, payments and refunds without holding up the bot', async () => {
    const errors: Error[] = [];
    const middleware = analytics(options({ onError: (error) => errors.push(error) }));
    const running = await startBot('700000009:mw-test', USER, middleware);
    const from = { from: { language_code: 'de', is_premium: true } };
    const { client } = running;
    try {
      expect(await running.say(client.makeCommand('/start promo42', from), true)).toBe('welcome promo42');
      expect(await running.say(client.makeCommand('/help me with 5551234', from), true)).toBe('help text');
      expect(await running.say(client.makeMessage('hello', from))).toBe('echo hello');
      expect(
        await running.say(client.makeMessage('', { ...from, successful_payment: payment(250, 'gold_pack') })),
      ).toBe('thanks for paying');
      expect(await running.say(client.makeMessage('', { ...from, refunded_payment: payment(250, 'gold_pack') }))).toBe(
        'refunded',
      );
    } finally {
      await running.stop();
      await middleware.stop();
    }
    expect(errors).toEqual([]);
    expect(running.errors).toEqual([]);

    const rows = await storedEvents(`e.platform = 'telegram-bot' AND e.locale = 'de'`);
    expect(rows.map((row) => [row.event_name, row.start_param, row.custom_data])).toEqual([
      ['bot-start', 'promo42', null],
      // the command's name only: its arguments may be personal
      ['bot-command', '', { command: 'help' }],
      ['successful-payment', '', { amount: 250, currency: 'XTR', invoice_payload: 'gold_pack' }],
      ['refunded-payment', '', { amount: 250, currency: 'XTR', invoice_payload: 'gold_pack' }],
    ]);
    expect(rows.every((row) => row.is_premium)).toBe(true);
    // the bot's id (the emulator's getMe says 666) reached the app, which had none: its launches can be checked
    expect((await service.services.registry.getApp(APP, OPERATOR)).botId).toBe('666');
    // one session per user per day, not one per message
    expect(new Set(rows.map((row) => row.session_id)).size).toBe(1);
    for (const row of rows) {
      expect(row.text).not.toContain(String(USER));
      expect(row.text).not.toContain('5551234');
    }
  });

  it('works the same from the built package', async () => {
    const built = (await import(pathToFileURL(path.join(GRAMMY_PACKAGE_DIR, 'index.js')).href)) as {
      analytics: typeof analytics;
    };
    const middleware = built.analytics(options({ onError: (error) => expect.fail(error.message) }));
    const running = await startBot('700000010:mw-package-test', PACKAGE_USER, middleware);
    try {
      expect(await running.say(running.client.makeCommand('/start from_package'), true)).toBe('welcome from_package');
    } finally {
      await running.stop();
      await middleware.stop();
    }
    const rows = await storedEvents(`e.start_param = 'from_package'`);
    expect(rows.map((row) => row.event_name)).toEqual(['bot-start']);
    expect(rows[0]!.text).not.toContain(String(PACKAGE_USER));
  });

  it('answers while the service hangs, and neither throws nor waits forever when it is unreachable', async () => {
    // a service that never answers: the bot must reply all the same
    let release!: (error: Error) => void;
    const hanging = new Promise<Response>((_resolve, reject) => (release = reject));
    const requests: string[] = [];
    const hangingFetch: typeof fetch = async (input) => {
      requests.push(String(input));
      return hanging;
    };
    const errors: Error[] = [];
    const hung = analytics(
      options({ fetch: hangingFetch, maxBatchSize: 1, retries: 0, onError: (error) => errors.push(error) }),
    );
    const first = await startBot('700000011:mw-hang-test', 765432198, hung);
    try {
      expect(await first.say(first.client.makeCommand('/start hang'), true)).toBe('welcome hang');
      expect(await first.say(first.client.makeCommand('/help'), true)).toBe('help text');
      expect(requests.length).toBe(1); // the first request is still pending
    } finally {
      await first.stop();
      release(new Error('connection reset'));
      await hung.stop();
    }
    expect(first.errors).toEqual([]);
    expect(errors.map((error) => error.message)).toEqual([
      'could not send 1 event(s): connection reset',
      'could not send 1 event(s): connection reset',
    ]);

    // nothing listens on this port: bounded retries, then the error handler, never the bot
    const closed = `http://127.0.0.1:${await freePort()}`;
    const unreachableErrors: Error[] = [];
    const unreachable = analytics(
      options({
        endpoint: closed,
        retries: 2,
        retryDelayMs: 10,
        onError: (error) => {
          unreachableErrors.push(error);
          throw new Error('a broken error handler');
        },
      }),
    );
    const second = await startBot('700000012:mw-down-test', 654321987, unreachable);
    try {
      expect(await second.say(second.client.makeCommand('/start down'), true)).toBe('welcome down');
    } finally {
      await second.stop();
      await unreachable.stop();
    }
    expect(second.errors).toEqual([]);
    expect(unreachableErrors.map((error) => error.message)).toEqual([
      expect.stringMatching(/^could not send 1 event\(s\): /),
    ]);
  });

  it('packs a package with grammy as a peer, whose declarations type a two-line setup', async () => {
    const unpacked = tempDir('tma-grammy-pack-');
    execFileSync('tar', ['-xzf', GRAMMY_TARBALL, '-C', unpacked]);
    // the ES module at the top, CommonJS in cjs/: each with its declarations and manifest
    const files = ['events.d.ts', 'index.d.ts', 'index.js', 'package.json', 'sender.d.ts', 'session.d.ts'];
    expect(fs.readdirSync(path.join(unpacked, 'package')).sort()).toEqual(['cjs', ...files]);
    const manifest = JSON.parse(fs.readFileSync(path.join(unpacked, 'package', 'package.json'), 'utf8'));
    expect(manifest).toMatchObject({
      name: 'tma-analytics-grammy',
      version: SDK_PACKAGE_VERSION,
      type: 'module',
      peerDependencies: { grammy: '^1' },
    });
    expect(manifest.dependencies).toBeUndefined();
    // grammy stays the integrator's copy: the bundle never carries it
    expect(fs.readFileSync(path.join(unpacked, 'package', 'index.js'), 'utf8')).not.toMatch(/from ['"]grammy/);
    expect(fs.readdirSync(path.join(unpacked, 'package', 'cjs')).sort()).toEqual(files);
    expect(fs.readFileSync(path.join(unpacked, 'package', 'cjs', 'index.js'), 'utf8')).not.toMatch(
      /require\(['"]grammy/,
    );
    fs.rmSync(unpacked, { recursive: true, force: true });

    // a consumer next to the package, so that its declarations find grammy the way an installed package would
    const consumer = path.join(GRAMMY_DIR, `consumer-${process.pid}.ts`);
    fs.writeFileSync(
      consumer,
      `import { Bot } from 'grammy';
       import { analytics } from 'tma-analytics-grammy';
       const bot = new Bot('1:x');
       const middleware = analytics({ serverKey: 'tma_server_x', appName: 'my_app', endpoint: 'https://a.example' });
       bot.use(middleware);
       const stopped: Promise<void> = middleware.stop();
       // @ts-expect-error appName is required
       analytics({ serverKey: 'tma_server_x', endpoint: 'https://a.example' });
       export { stopped };`,
    );
    try {
      const { default: ts } = await import('typescript');
      const program = ts.createProgram([consumer], {
        strict: true,
        noEmit: true,
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.ESNext,
        moduleResolution: ts.ModuleResolutionKind.Bundler,
        types: ['node'],
        skipLibCheck: true,
        paths: { 'tma-analytics-grammy': [path.join(GRAMMY_PACKAGE_DIR, 'index.d.ts')] },
      });
      const problems = ts
        .getPreEmitDiagnostics(program)
        .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      expect(problems).toEqual([]);
    } finally {
      fs.rmSync(consumer, { force: true });
    }
  });

  it('refuses a setup without a server key at once', () => {
    expect(() => analytics(options({ serverKey: 'tma_0123' }))).toThrow(/serverKey/);
    expect(() => analytics(options({ endpoint: 'analytics.example.com' }))).toThrow(/endpoint/);
  });

  it('keeps one session id per user per UTC day, unguessable without the server key', () => {
    const noon = Date.UTC(2030, 0, 1, 12);
    const id = dailySessionId(serverKey, USER, noon);
    expect(id).toMatch(new RegExp(SESSION_ID_PATTERN));
    expect(dailySessionId(serverKey, USER, Date.UTC(2030, 0, 1, 23, 59))).toBe(id);
    expect(dailySessionId(serverKey, USER, Date.UTC(2030, 0, 2))).not.toBe(id);
    expect(dailySessionId(serverKey, USER + 1, noon)).not.toBe(id);
    expect(dailySessionId('tma_server_another_key', USER, noon)).not.toBe(id);
  });

  it("ignores another bot's commands in a group and messages from bots", () => {
    const source = { appName: APP, botUsername: 'my_bot', sessionId: () => '00000000-0000-0000-0000-000000000000' };
    const user = { id: USER, is_bot: false, first_name: 'Dana' };
    const command = (text: string) =>
      ({
        message_id: 1,
        date: 0,
        chat: { id: -1, type: 'group', title: 'g' },
        text,
        entities: [{ type: 'bot_command', offset: 0, length: text.split(' ')[0]!.length }],
      }) as never;
    expect(botEventOf(command('/help@other_bot'), user, source, 0)).toBeNull();
    expect(botEventOf(command('/help@My_Bot'), user, source, 0)?.custom_data).toEqual({ command: 'help' });
    expect(botEventOf(command('/start'), user, source, 0)).toMatchObject({ event_name: 'bot-start', start_param: '' });
    expect(botEventOf(command('/help'), { ...user, is_bot: true }, source, 0)).toBeNull();
  });
});
