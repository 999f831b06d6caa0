// The operator CLI's data controls: `apps retention` (read, set, bad values refused) and `users erase` (the JSON
// of the counts, text without --json, refusals with the other commands' exit codes), in the service's process and
// on the store the CLI opens itself.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, runCli, runCliWith, START_TIMEOUT_MS } from '../helpers/cli.ts';
import { makeEvent, postEvents } from '../helpers/events.ts';
import { startTestService, tempDir, type TestService } from '../helpers/service.ts';

const ERASED_USER = 990000111;
const KEPT_USER = 990000222;
const RULE = 'Retention must be 30, 90, 180, 365 days or "forever".';

describe('data control commands', () => {
  let service: TestService;
  // the parsed JSON left out: these cases compare what the CLI prints, byte for byte
  const cli = async (...argv: string[]) => {
    const { exitCode, stdout, stderr } = await runCli(service, ...argv);
    return { exitCode, stdout, stderr };
  };

  beforeAll(async () => {
    service = await startTestService({ RATE_LIMIT_MAX: '100000' });
    const token = await service.createApp('cli_data');
    const sent = [ERASED_USER, ERASED_USER, KEPT_USER].map((user) => makeEvent('cli_data', { user_id: user }));
    expect((await postEvents(service.url, sent, { token })).status).toBe(201);
  }, START_TIMEOUT_MS);
  afterAll(() => service?.close());

  it('apps retention prints the period, sets it, and refuses a value that is no choice', async () => {
    expect(json(await cli('apps', 'retention', '--app-name', 'cli_data', '--json'))).toEqual({
      app_name: 'cli_data',
      retention_days: null,
      retention_choices: [30, 90, 180, 365, null],
    });
    expect(json(await cli('apps', 'retention', '--app-name', 'cli_data', '--days', '90', '--json'))).toMatchObject({
      retention_days: 90,
    });
    const text = await cli('apps', 'retention', '--app-name', 'cli_data', '--days', '365');
    expect(text).toEqual({
      exitCode: 0,
      stdout:
        'cli_data keeps its events for 1 year (older events, sessions and per-user rows are deleted every hour; daily totals stay).\n',
      stderr: '',
    });
    expect((await cli('apps', 'retention', '--app-name', 'cli_data', '--days', 'forever')).stdout).toBe(
      'cli_data keeps its events forever.\n',
    );

    for (const days of ['7', 'never', '90d', '']) {
      const refused = await cli('apps', 'retention', '--app-name', 'cli_data', '--days', days, '--json');
      expect(refused, days).toEqual({ exitCode: 2, stdout: `${JSON.stringify({ error: RULE })}\n`, stderr: '' });
    }
    const usage = await cli('apps', 'retention', '--app-name', 'cli_data', '--days', '7');
    expect(usage.exitCode).toBe(2);
    expect(usage.stderr).toMatch(/^Retention must be 30, 90, 180, 365 days or "forever"\.\n\nUsage:/);
    expect(await cli('apps', 'retention', '--app-name', 'no_such_app', '--json')).toEqual({
      exitCode: 1,
      stdout: '{"error":"There is no app named \\"no_such_app\\"."}\n',
      stderr: '',
    });
    const audit = await service.store.prisma.auditLog.findMany({
      where: { appName: 'cli_data', action: 'app.retention' },
      orderBy: { id: 'asc' },
    });
    expect(audit.map((entry) => [entry.surface, entry.detail])).toEqual([
      ['cli', { days: 90, previous: null, admin: true }],
      ['cli', { days: 365, previous: 90, admin: true }],
      ['cli', { days: null, previous: 365, admin: true }],
    ]);
  });

  it('users erase prints the rows deleted per table, as JSON or text, and refuses a bad id', async () => {
    for (const [argv, error] of [
      [['--telegram-user-id', 'abc'], 'A Telegram user id is a positive number such as 123456789.'],
      [['--telegram-user-id', '0'], 'A Telegram user id is a positive number such as 123456789.'],
      [[], 'missing --telegram-user-id'],
    ] as const) {
      expect(await cli('users', 'erase', '--app-name', 'cli_data', ...argv, '--json'), argv.join(' ')).toEqual({
        exitCode: 2,
        stdout: `${JSON.stringify({ error })}\n`,
        stderr: '',
      });
    }
    const erased = json(
      await cli('users', 'erase', '--app-name', 'cli_data', '--telegram-user-id', String(ERASED_USER), '--json'),
    );
    expect(erased).toEqual({
      app_name: 'cli_data',
      user: expect.stringMatching(/^[A-Za-z0-9_-]{12}$/),
      deleted: {
        events: 2,
        daily_sessions: 2,
        daily_users: 1,
        app_users: 1,
        wallet_users: 0,
        verified_sessions: 0,
        funnel_postings: 2,
      },
      complete: true,
    });
    const text = await cli('users', 'erase', '--app-name', 'cli_data', '--telegram-user-id', String(KEPT_USER));
    expect(text.exitCode, text.stderr).toBe(0);
    expect(text.stdout).toMatch(
      /^Erased the user from cli_data: events 1, app_users 1, wallet_users 0, verified_sessions 0, daily_users 1, daily_sessions 1, funnel_postings 1\.\nDaily totals of events, users and sessions keep counting them, as anonymous numbers; what only they sent \(a start_param, a custom event name or value\) is deleted too\.\nReference in the audit log: [A-Za-z0-9_-]{12}\n$/,
    );
    const [row] = await service.store.sql.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM events e JOIN apps a ON a.id = e.app_id WHERE a.app_name = 'cli_data'`,
    );
    expect(row!.n).toBe(0);
    const audit = await service.store.prisma.auditLog.findMany({
      where: { appName: 'cli_data', action: 'user.erase' },
    });
    expect(audit.map((entry) => entry.surface)).toEqual(['cli', 'cli']);
    expect(JSON.stringify(audit.map((entry) => entry.detail))).not.toContain(String(ERASED_USER));
    // each erase is recorded under the reference its answer gave, to quote
    expect(audit.map((entry) => (entry.detail as { user: string }).user)).toEqual([
      erased.user,
      text.stdout.match(/Reference in the audit log: ([A-Za-z0-9_-]{12})/)![1],
    ]);
  });

  // its first command makes the embedded store (initdb and migrations)
  it(
    'runs on the embedded store the CLI opens itself when no service owns it',
    async () => {
      const env = { DATA_DIR: tempDir() };
      json(
        await runCliWith(env, [
          ...['tokens', 'create', '--bot', '@cli_data_bot', '--domain', 'data.example.com'],
          ...['--app-name', 'cli_data_process', '--json'],
        ]),
      );
      expect(
        json(await runCliWith(env, ['apps', 'retention', '--app-name', 'cli_data_process', '--days', '30', '--json'])),
      ).toMatchObject({ app_name: 'cli_data_process', retention_days: 30 });
      expect(
        json(
          await runCliWith(env, [
            ...['users', 'erase', '--app-name', 'cli_data_process'],
            ...['--telegram-user-id', '12345', '--json'],
          ]),
        ),
      ).toMatchObject({ app_name: 'cli_data_process', deleted: { events: 0 }, complete: true });
    },
    START_TIMEOUT_MS,
  );
});
