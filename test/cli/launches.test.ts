// The operator CLI on verified launches: a token made with the bot's id (never its token), the id set, changed and
// forgotten, `apps show` naming what the launches of the week were and why some did not verify, and the apps one
// person may own, raised by the operator.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, runCli, START_TIMEOUT_MS } from '../helpers/cli.ts';
import { makeEvent, postEvents } from '../helpers/events.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { launchSigner } from '../helpers/telegram-launch.ts';

const signer = launchSigner();
const BOT_ID = 6_789_012_345;

describe('the CLI and verified launches', () => {
  let service: TestService;
  const cli = (...argv: string[]) => runCli(service, ...argv);

  beforeAll(async () => {
    service = await startTestService({ TELEGRAM_PUBLIC_KEY: signer.publicKeyHex, MAX_APPS_PER_OWNER: '2' });
  }, START_TIMEOUT_MS);
  afterAll(() => service?.close());

  it("refuses the bot's token, or its name, in place of its id, and never prints the token", async () => {
    const create = (botId: string) =>
      cli(
        'tokens',
        'create',
        '--bot',
        '@refused_bot',
        '--domain',
        'refused.example.com',
        '--app-name',
        'refused_app',
        '--bot-id',
        botId,
        '--json',
      );
    const pasted = await create(`${BOT_ID}:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw`);
    expect(pasted.exitCode).toBe(2);
    expect(pasted.stdout).toContain("That is the bot's token");
    expect(pasted.stdout).not.toContain('AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw');
    expect((await create('@refused_bot')).stdout).toContain("The bot's id is a number");
  });

  it("takes the bot's id with the token, and shows it", async () => {
    const create = cli(
      'tokens',
      'create',
      '--bot',
      '@ids_bot',
      '--domain',
      'ids.example.com',
      '--app-name',
      'ids_app',
      '--bot-id',
      String(BOT_ID),
      '--json',
    );
    expect(json(await create)).toMatchObject({ bot_id: String(BOT_ID) });
    expect(json(await cli('apps', 'bot-id', '--app-name', 'ids_app', '--json'))).toEqual({
      app_name: 'ids_app',
      bot: '@ids_bot',
      bot_id: String(BOT_ID),
    });
  });

  it("changes and forgets the bot's id, never both at once", async () => {
    await service.services.registry.createApp(
      { appName: 'changed_app', bot: '@changed_bot', botId: String(BOT_ID), domains: ['changed.example.com'] },
      { surface: 'cli' },
    );
    expect(json(await cli('apps', 'bot-id', '--app-name', 'changed_app', '--bot-id', '42', '--json')).bot_id).toBe(
      '42',
    );
    const cleared = await cli('apps', 'bot-id', '--app-name', 'changed_app', '--clear');
    expect(cleared.stdout).toBe(
      'changed_app: bot id: none: no launch can be verified; set it with apps bot-id --app-name changed_app --bot-id <id>\n',
    );
    expect((await cli('apps', 'bot-id', '--app-name', 'changed_app', '--clear', '--bot-id', '1')).exitCode).toBe(2);
  });

  it('shows the week of launches: verified ones, and why the others were not', async () => {
    const { token } = await service.services.registry.createApp(
      { appName: 'shown_app', bot: '@shown_bot', botId: String(BOT_ID), domains: ['app.example.com'] },
      { surface: 'cli' },
    );
    const launch = (user: number, initData?: string) =>
      makeEvent('shown_app', { user_id: user, ...(initData === undefined ? {} : { init_data: initData }) });
    const signed = (user: number, botId = BOT_ID) => signer.sign({ botId, user: { id: user, first_name: 'X' } });
    const sent = await postEvents(
      service.url,
      [launch(1, signed(1)), launch(2, signed(2)), launch(3), launch(4, signed(4, 99)), launch(5, signed(6))],
      { token },
    );
    expect(sent.status, sent.text).toBe(201);
    await service.loaded();
    const shown = json(await cli('apps', 'show', '--app-name', 'shown_app', '--json'));
    expect(shown.bot_id).toBe(String(BOT_ID));
    expect(shown.launches_7d).toMatchObject({
      launches: 5,
      verified_users: 2,
      outcomes: { verified: 2, no_proof: 1, bad_signature: 1, other_user: 1 },
    });
    const text = (await cli('apps', 'show', '--app-name', 'shown_app')).stdout;
    expect(text).toContain(`bot id: ${BOT_ID}`);
    expect(text).toContain('launches (7 days): 5, verified 2 (2 users); not verified: 1 sent no launch data');
    expect(text).toContain("1 carried another user's launch data");
  });

  it('keeps a person to MAX_APPS_PER_OWNER apps until the operator raises their limit', async () => {
    const owner = '5150';
    const site = { surface: 'site' as const, telegramId: owner };
    const make = (appName: string) =>
      service.services.registry.createApp(
        { appName, bot: '@limit_bot', domains: ['limit.example.com'], ownerTelegramId: owner },
        site,
      );
    await make('limit_one');
    await make('limit_two');
    await expect(make('limit_three')).rejects.toThrow('You own 2 apps, as many as one person may hold here (2).');
    expect(json(await cli('owners', 'limit', '--telegram-id', owner, '--json'))).toEqual({
      owned: 2,
      max_apps: 2,
      source: 'default',
    });
    expect(json(await cli('owners', 'limit', '--telegram-id', owner, '--apps', '3', '--json'))).toMatchObject({
      max_apps: 3,
      source: 'administrator',
    });
    await make('limit_three');
    await expect(make('limit_four')).rejects.toThrow('(3)');
    expect((await cli('owners', 'limit', '--telegram-id', owner, '--apps', '0')).exitCode).toBe(2);
    expect(json(await cli('owners', 'limit', '--telegram-id', owner, '--default', '--json'))).toMatchObject({
      owned: 3,
      max_apps: 2,
    });
    // nothing of the id itself in the audit log
    const audit = await service.store.sql.query<{ detail: unknown }>(
      `SELECT detail FROM audit_log WHERE action = 'owner.app_limit'`,
    );
    expect(JSON.stringify(audit)).not.toContain(owner);
  });
});
