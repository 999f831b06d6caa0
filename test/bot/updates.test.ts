// How the bot receives updates in production, against the Bot API emulator (telegram-test-api): in webhook mode at a
// route of the service checked with Telegram's secret header; in polling mode on exactly one of two nodes sharing a
// PostgreSQL database, the other taking over when the polling node stops.
import http from 'node:http';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { SECRET_HEADER } from '../../src/bot/webhook-route.ts';
import { loadConfig } from '../../src/platform/config.ts';
import { startTelegramEmulator, type TelegramServer } from '../helpers/telegram-emulator.ts';
import { available } from '../helpers/environment.ts';
import type { TestDatabase } from '../helpers/postgres.ts';
import { freePort, killAllChildren, startServiceProcess, type ServiceProcess } from '../helpers/service-process.ts';
import { tempDir } from '../helpers/service.ts';
import { embeddedDataDir, migratedDatabase } from '../helpers/stores.ts';

const BOT_TOKEN = '700000003:updates-test-token';
const USER = 515151;

let telegram: TelegramServer | undefined;
const closers: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  await killAllChildren();
  for (const close of closers.splice(0)) await close();
  await telegram?.stop();
  telegram = undefined;
});
afterAll(() => killAllChildren());

async function startTelegram(port?: number) {
  telegram = await startTelegramEmulator(port);
  const client = telegram.getClient(BOT_TOKEN, { userId: USER, chatId: USER, type: 'private', firstName: 'Wes' });
  return { server: telegram, client };
}

/** the bot's messages in the user's chat */
const botMessages = (server: TelegramServer) =>
  server.storage.botMessages.filter((update) => update.botToken === BOT_TOKEN).map((update) => update.message.text);

async function until<T>(what: string, check: () => T | undefined | false, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = check();
    if (value) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** the emulator calls webhooks without Telegram's secret header: this relay adds it, as Telegram does */
async function secretAddingRelay(target: string, secret: string): Promise<string> {
  const relay = http.createServer((request, response) => {
    const forward = http.request(
      target,
      { method: 'POST', headers: { 'content-type': 'application/json', [SECRET_HEADER]: secret } },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502);
        answer.pipe(response);
      },
    );
    // a call in flight when the service is stopped ends, rather than holding the relay open
    forward.on('error', () => {
      if (!response.headersSent) response.writeHead(502);
      response.end();
    });
    request.pipe(forward);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise((resolve) => {
        relay.close(resolve);
        relay.closeAllConnections();
      }),
  );
  return `http://127.0.0.1:${(relay.address() as { port: number }).port}/`;
}

describe('webhook mode', () => {
  it('registers the webhook with its secret, refuses calls without it, and answers updates arriving there', async () => {
    const { server, client } = await startTelegram();
    const port = await freePort();
    const webhookUrl = `http://127.0.0.1:${port}/telegram/webhook`;
    const service = await startServiceProcess({
      DATA_DIR: await embeddedDataDir(),
      PORT: String(port),
      BOT_TOKEN,
      TELEGRAM_API_ROOT: server.config.apiURL,
      BOT_WEBHOOK_URL: webhookUrl,
    });
    const webhooks = (server as unknown as { webhooks: Record<string, { url: string; secret_token?: string }> })
      .webhooks;
    const registered = await until('setWebhook', () => webhooks[BOT_TOKEN]);
    expect(registered.url).toBe(webhookUrl);
    expect(registered.secret_token).toMatch(/^[A-Za-z0-9_-]{32,}$/);

    // anyone else calling the webhook is refused before the bot sees the update
    const update = {
      update_id: 1,
      message: { message_id: 1, date: 0, chat: { id: USER, type: 'private' }, text: '/start' },
    };
    for (const headers of [{}, { [SECRET_HEADER]: 'not-the-secret' }] as Record<string, string>[]) {
      const answer = await fetch(webhookUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(update),
      });
      expect(answer.status).toBe(401);
    }
    // a large body, not even JSON: refused for the missing secret before it is read (a parse would answer 400)
    const unread = await fetch(webhookUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"update_id":${'1'.repeat(900_000)}`,
    });
    expect(unread.status).toBe(401);
    expect(botMessages(server)).toEqual([]);

    webhooks[BOT_TOKEN]!.url = await secretAddingRelay(webhookUrl, registered.secret_token!);
    await client.sendCommand(client.makeCommand('/start'));
    const [reply] = await until('the reply to /start', () => botMessages(server).length > 0 && botMessages(server));
    expect(reply).toContain('Open <b>Analytics</b>');
    expect(service.output()).not.toContain('getUpdates');
  });
});

const postgres = await available('PostgreSQL');

describe.runIf(postgres)('polling mode with two nodes on one database', () => {
  let database: TestDatabase | undefined;
  afterAll(() => database?.drop());

  it('polls on exactly one node; the other takes over when it stops', async () => {
    const { server, client } = await startTelegram();
    database = await migratedDatabase();
    const env = {
      DATABASE_URL: database.url,
      SECRET: 'w'.repeat(40),
      BOT_TOKEN,
      TELEGRAM_API_ROOT: server.config.apiURL,
      LOG_LEVEL: 'info',
    };
    const nodes: ServiceProcess[] = [];
    for (let i = 0; i < 2; i++) nodes.push(await startServiceProcess({ ...env, DATA_DIR: tempDir() }));
    const polls = (node: ServiceProcess) => node.output().includes('polling the bot updates on this node');
    const standsBy = (node: ServiceProcess) => node.output().includes('another node polls the bot updates');
    const poller = await until('one polling node', () => nodes.find(polls));
    const other = nodes.find((node) => node !== poller)!;
    await until('the other node standing by', () => standsBy(other));
    expect(polls(other)).toBe(false);

    // each message is answered once
    await client.sendCommand(client.makeCommand('/start'));
    await until('the reply to /start', () => botMessages(server).length > 0);
    // nothing to wait for: a second answer, from the node standing by, would have come within this
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(botMessages(server)).toHaveLength(1);

    await poller.stop();
    await until('the other node polling', () => polls(other), 120_000);
    await client.sendCommand(client.makeCommand('/start'));
    await until('the reply from the other node', () => botMessages(server).length === 2, 120_000);
  });
});

describe('Telegram out of reach', () => {
  it('keeps the service up, says why, answers within 15 s of Telegram coming back, and stops cleanly without it', async () => {
    const port = await freePort();
    const node = await startServiceProcess({
      DATA_DIR: await embeddedDataDir(),
      SECRET: 'u'.repeat(40),
      BOT_TOKEN,
      TELEGRAM_API_ROOT: `http://127.0.0.1:${port}`,
      LOG_LEVEL: 'info',
    });
    // said at once, not after a network retry of the Bot API client doubling its wait up to an hour
    await until('the log line', () => node.output().includes('bot cannot reach Telegram; retrying in 15 s'), 60_000);
    expect((await fetch(`${node.url}/healthz`)).status).toBe(200);
    const { server, client } = await startTelegram(port);
    await client.sendCommand(client.makeCommand('/start'));
    await until('the reply to /start', () => botMessages(server).length > 0, 120_000);
    // Telegram gone again while the bot polls: a stop still ends cleanly
    await server.stop();
    telegram = undefined;
    expect(await node.stop(20_000)).toEqual({ code: 0, signal: null });
  });

  it('says why in webhook mode too', async () => {
    const node = await startServiceProcess({
      DATA_DIR: await embeddedDataDir(),
      SECRET: 'v'.repeat(40),
      BOT_TOKEN,
      TELEGRAM_API_ROOT: `http://127.0.0.1:${await freePort()}`,
      BOT_WEBHOOK_URL: 'https://analytics.example.com/telegram/webhook',
      LOG_LEVEL: 'info',
    });
    await until(
      'the log line',
      () => node.output().includes('cannot register the bot webhook with Telegram; retrying in 15 s'),
      10_000,
    );
    expect((await fetch(`${node.url}/healthz`)).status).toBe(200);
  });
});

describe('webhook settings', () => {
  it('takes an absolute URL with a path of its own and a secret Telegram accepts, and says what is wrong otherwise', () => {
    const base = { DATA_DIR: tempDir() };
    expect(loadConfig({ ...base, BOT_WEBHOOK_URL: 'https://a.example/telegram/hook' }).botWebhookUrl).toBe(
      'https://a.example/telegram/hook',
    );
    expect(loadConfig(base).botWebhookUrl).toBeUndefined();
    expect(() => loadConfig({ ...base, BOT_WEBHOOK_URL: 'a.example/hook' })).toThrow(
      'BOT_WEBHOOK_URL must be an absolute URL, got "a.example/hook"',
    );
    expect(() => loadConfig({ ...base, BOT_WEBHOOK_URL: 'ftp://a.example/hook' })).toThrow('must be an https:// URL');
    expect(() => loadConfig({ ...base, BOT_WEBHOOK_URL: 'https://a.example/' })).toThrow('must have a path of its own');
    expect(loadConfig({ ...base, BOT_WEBHOOK_SECRET: 'abc_DEF-123' }).botWebhookSecret).toBe('abc_DEF-123');
    expect(() => loadConfig({ ...base, BOT_WEBHOOK_SECRET: 'has spaces' })).toThrow(
      'BOT_WEBHOOK_SECRET must be 1 to 256 characters',
    );
  });
});
