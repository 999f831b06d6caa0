// The Bot API emulator (telegram-test-api) on a free local port, as the bot, alert and middleware suites start it.
import emulator from 'telegram-test-api';
import type { TelegramServer } from 'telegram-test-api/lib/telegramServer.js';
import { freePort } from './service-process.ts';

export type { TelegramServer };

/** a started emulator; stop it with `.stop()` */
export async function startTelegramEmulator(port?: number): Promise<TelegramServer> {
  const server = new (emulator as unknown as typeof TelegramServer)({
    port: port ?? (await freePort()),
    host: '127.0.0.1',
    storeTimeout: 600,
  });
  await server.start();
  // longer than a client's kept-alive socket lives (Node's agents close an idle one after 5 s): with the server's own
  // 5 s, a client could send on a socket the server was closing at that moment and read ECONNRESET
  (server as unknown as { server: import('node:http').Server }).server.keepAliveTimeout = 60_000;
  return server;
}
