// End to end: the grammY middleware's install line, as the site and the bot show it with a new server key, run as is
// (`npm install <url>`) in a bot project that has grammy; the installed package is the one the service serves, and the
// two lines shown next to it, in a grammY bot, send a /start payload to the service.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverKeyIssued } from '../../src/bot/server-key-actions.ts';
import { escapeHtml } from '../../src/bot/texts.ts';
import { GRAMMY_PACKAGE_NAME, GRAMMY_TARBALL, SDK_PACKAGE_VERSION } from '../../src/sdk-serving/sdk-files.ts';
import { expectInstalledFrom, INSTALL_TIMEOUT_MS, run, runInstallLine } from '../helpers/npm-install.ts';
import { tempDir, type TestService } from '../helpers/service.ts';
import { waitForEvents } from '../sdk/browser-harness.ts';
import { create, startSiteApi } from '../site/api-harness.ts';
import { elementData, filledSnippet, type SiteClient } from '../site/site-harness.ts';

const APP_NAME = 'installed_bot_app';
const ROOT = path.resolve(import.meta.dirname, '../..');

let service: TestService;
let alice: SiteClient;
let serverKey: string;
let scratch: string;
/** the server key card's templates on /analytics, filled in as the site's script fills them */
let siteSnippets: { install: string; lines: string };
/** the bot project's dependencies before the install */
let botDependencies: Record<string, string>;

const project = () => path.join(scratch, 'bot');

/**
 * A bot project as an integrator has one: grammy a dependency, installed and locked. Its files come from this
 * repository's own install, so npm only looks up grammy's metadata when it checks the new package's peer. Returns
 * the project's dependencies.
 */
function writeBotProject(): Record<string, string> {
  const rootLock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8'));
  const locked: Record<string, unknown> = {};
  const copy = (name: string) => {
    const key = `node_modules/${name}`;
    if (locked[key]) return;
    const entry = { ...rootLock.packages[key] };
    if (!entry.version) throw new Error(`${name} is not in this repository's lockfile`);
    for (const flag of ['dev', 'devOptional', 'peer']) delete entry[flag];
    entry.resolved ??= `https://registry.npmjs.org/${name}/-/${name.split('/').pop()}-${entry.version}.tgz`;
    locked[key] = entry;
    fs.cpSync(path.join(ROOT, key), path.join(project(), key), { recursive: true });
    for (const dependency of Object.keys(entry.dependencies ?? {})) copy(dependency);
  };
  const grammyVersion = rootLock.packages['node_modules/grammy'].version as string;
  const manifest = { name: 'scratch-bot', version: '1.0.0', private: true, type: 'module' };
  const dependencies = { grammy: `^${grammyVersion}` };
  fs.mkdirSync(project(), { recursive: true });
  copy('grammy');
  fs.writeFileSync(path.join(project(), 'package.json'), JSON.stringify({ ...manifest, dependencies }));
  fs.writeFileSync(
    path.join(project(), 'package-lock.json'),
    JSON.stringify({
      ...manifest,
      lockfileVersion: 3,
      requires: true,
      packages: { '': { name: manifest.name, version: manifest.version, dependencies }, ...locked },
    }),
  );
  return dependencies;
}

const fillAsTheSiteDoes = (template: string) =>
  filledSnippet(template, { base: service.url, token: serverKey, appName: APP_NAME });

beforeAll(async () => {
  ({ service, alice } = await startSiteApi());
  await create(alice, APP_NAME);
  const issued = await alice.request('POST', `/api/apps/${APP_NAME}/server-keys`, { body: {} });
  expect(issued.status, issued.text).toBe(201);
  serverKey = issued.json.key;
  const page = await alice.request('GET', '/analytics');
  expect(page.status, page.text.slice(0, 300)).toBe(200);
  siteSnippets = {
    install: fillAsTheSiteDoes(elementData(page.text, 'server-keys', 'grammy-install')),
    lines: fillAsTheSiteDoes(elementData(page.text, 'server-keys', 'grammy')),
  };
  scratch = tempDir('tma-grammy-install-');
  botDependencies = writeBotProject();
});
afterAll(async () => {
  await service?.close();
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

/** the install line as shown, run once in the bot project (each test that needs the package waits for it) */
let installing: Promise<string> | undefined;
const installed = () => (installing ??= runInstallLine(siteSnippets.install, project()));

/** runs a bot file of the project until the service holds its bot-start with this payload */
async function expectBotStart(file: string, source: string, payload: string): Promise<void> {
  const bot = path.join(project(), file);
  fs.writeFileSync(bot, source);
  let child: ChildProcess | undefined;
  let output = '';
  try {
    child = spawn(process.execPath, [bot], { cwd: project(), stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.on('data', (chunk) => (output += chunk));
    child.stderr?.on('data', (chunk) => (output += chunk));
    const events = await waitForEvents(service, APP_NAME, (stored) =>
      stored.some((event) => event.event_name === 'bot-start' && event.start_param === payload),
    );
    expect(
      events.find((event) => event.event_name === 'bot-start' && event.start_param === payload),
      output,
    ).toBeDefined();
  } finally {
    child?.kill();
  }
}

/** a /start with a payload as Telegram delivers it, then the process stays until the test has seen the event */
const startUpdate = (payload: string) => `
const botInfo = { id: 7000001, is_bot: true, first_name: 'Shop', username: 'scratch_shop_bot', can_join_groups: true,
  can_read_all_group_messages: false, supports_inline_queries: false, can_connect_to_business: false,
  has_main_web_app: false };
const bot = new Bot('7000001:scratch', { botInfo });
BOT_LINES
bot.handleUpdate({ update_id: 1, message: { message_id: 1, date: Math.floor(Date.now() / 1000),
  chat: { id: 730009999, type: 'private', first_name: 'Bob' }, from: { id: 730009999, is_bot: false, first_name: 'Bob' },
  text: '/start ${payload}', entities: [{ type: 'bot_command', offset: 0, length: 6 }] } });
// the middleware sends in the background
setInterval(() => {}, 1000);
`;

describe('the grammY middleware package installed from the running service', () => {
  const versionedUrl = () => `${service.url}/sdk/${GRAMMY_PACKAGE_NAME}-${SDK_PACKAGE_VERSION}.tgz`;

  it('is offered with the new server key by the same lines on the site and in the bot', async () => {
    expect(siteSnippets.install).toBe(`npm install ${versionedUrl()}`);
    expect(siteSnippets.lines).toBe(
      `import { analytics } from '${GRAMMY_PACKAGE_NAME}';\n` +
        `bot.use(analytics({ serverKey: '${serverKey}', appName: '${APP_NAME}', endpoint: '${service.url}' }));`,
    );
    const app = await service.services.registry.getApp(APP_NAME, { surface: 'cli', isAdmin: true });
    const botText = serverKeyIssued(serverKey, app, service.url);
    expect(botText).toContain(`<pre>${siteSnippets.install}</pre>`);
    expect(botText).toContain(`<pre>${escapeHtml(siteSnippets.lines)}</pre>`);
  });

  it(
    'installs with the npm install line as shown, and its two lines send a /start payload from a grammY bot',
    async () => {
      const url = await installed();
      expectInstalledFrom(
        project(),
        { name: GRAMMY_PACKAGE_NAME, url, tarball: GRAMMY_TARBALL, version: SDK_PACKAGE_VERSION },
        botDependencies,
      );
      await expectBotStart(
        'bot.js',
        `import { Bot } from 'grammy';\n${startUpdate('spring').replace('BOT_LINES', siteSnippets.lines)}`,
        'spring',
      );
    },
    INSTALL_TIMEOUT_MS,
  );

  it(
    'loads with require in a CommonJS bot, which sends a /start payload the same way',
    async () => {
      await installed();
      const lines = siteSnippets.lines.replace(
        `import { analytics } from '${GRAMMY_PACKAGE_NAME}';`,
        `const { analytics } = require('${GRAMMY_PACKAGE_NAME}');`,
      );
      expect(lines).toContain('require(');
      await expectBotStart(
        'bot.cjs',
        `const { Bot } = require('grammy');\n${startUpdate('autumn').replace('BOT_LINES', lines)}`,
        'autumn',
      );
    },
    INSTALL_TIMEOUT_MS,
  );

  it(
    'has types for require and for import: a CommonJS and an ES module file type-check against it',
    async () => {
      await installed();
      const use = `import { analytics } from '${GRAMMY_PACKAGE_NAME}';
const tracking: { stop(): Promise<void> } = analytics({ serverKey: 'tma_server_x', appName: 'a', endpoint: 'https://h' });
export { tracking };
`;
      fs.writeFileSync(path.join(project(), 'check-require.cts'), use);
      fs.writeFileSync(path.join(project(), 'check-import.mts'), use);
      const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
      const args = ['--noEmit', '--strict', '--skipLibCheck', '--module', 'node16', '--moduleResolution', 'node16'];
      for (const file of ['check-require.cts', 'check-import.mts']) {
        const result = await run(process.execPath, [tsc, ...args, file], { cwd: project() }).then(
          () => 'ok',
          (error: { stdout?: string }) => error.stdout ?? String(error),
        );
        expect(result, file).toBe('ok');
      }
    },
    INSTALL_TIMEOUT_MS,
  );
});
