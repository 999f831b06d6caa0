// The operator CLI's read-keys commands as operators run them: the exact JSON of create, list and revoke, the text
// without --json, and refusals with the other commands' exit codes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, runCli, START_TIMEOUT_MS } from '../helpers/cli.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

/** who made what the operator CLI makes, as lists name them */
const OPERATOR_MADE = { ref: null, name: null, role: 'operator' };

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('read-keys commands', () => {
  let service: TestService;
  const cli = (...argv: string[]) => runCli(service, ...argv);

  beforeAll(async () => {
    service = await startTestService();
  }, START_TIMEOUT_MS);
  afterAll(() => service?.close());

  it('create prints the key once, list shows prefixes only, revoke prints the revoked key', async () => {
    await service.createApp('reader_demo', 'reader.example.com');
    const created = await cli('read-keys', 'create', '--app-name', 'reader_demo', '--json');
    const document = json(created);
    expect(Object.keys(document)).toEqual(['key', 'app_name']);
    expect(document.app_name).toBe('reader_demo');
    expect(document.key).toMatch(/^tma_read_[A-Za-z0-9_-]{32}$/);
    expect(created.stdout).toBe(`{"key":"${document.key}","app_name":"reader_demo"}\n`);
    const prefix = document.key.slice(0, 17);

    const text = await cli('read-keys', 'create', '--app-name', 'reader_demo');
    expect(text.exitCode, text.stderr).toBe(0);
    const second = /^New read key of reader_demo \(shown once\): (tma_read_[A-Za-z0-9_-]{32})\n$/.exec(text.stdout);
    expect(second, text.stdout).not.toBeNull();

    const listed = await cli('read-keys', 'list', '--app-name', 'reader_demo', '--json');
    expect(listed.stdout).not.toContain(document.key);
    expect(listed.stdout).not.toContain(second![1]);
    const keys = json(listed);
    expect(keys).toHaveLength(2);
    for (const key of keys) {
      expect(Object.keys(key)).toEqual(['prefix', 'app_name', 'created_at', 'revoked_at', 'made_by']);
      expect(key.made_by).toEqual(OPERATOR_MADE);
      expect(key).toMatchObject({
        app_name: 'reader_demo',
        created_at: expect.stringMatching(ISO),
        revoked_at: null,
      });
    }
    expect(keys.map((key: { prefix: string }) => key.prefix).sort()).toEqual([prefix, second![1]!.slice(0, 17)].sort());

    const revoked = json(await cli('read-keys', 'revoke', '--key-prefix', prefix, '--json'));
    expect(revoked).toEqual({
      prefix,
      app_name: 'reader_demo',
      created_at: keys.find((key: { prefix: string }) => key.prefix === prefix).created_at,
      revoked_at: expect.stringMatching(ISO),
      made_by: OPERATOR_MADE,
    });
    // active first: the revoked key comes last
    const after = json(await cli('read-keys', 'list', '--app-name', 'reader_demo', '--json'));
    expect(after.map((key: { prefix: string; revoked_at: string | null }) => [key.prefix, key.revoked_at])).toEqual([
      [second![1]!.slice(0, 17), null],
      [prefix, revoked.revoked_at],
    ]);

    const listText = await cli('read-keys', 'list', '--app-name', 'reader_demo');
    expect(listText.stdout).toContain(
      `${prefix}…\tcreated ${revoked.created_at} by the operator\trevoked ${revoked.revoked_at}`,
    );
    expect(listText.stdout).toContain(`${second![1]!.slice(0, 17)}…\tcreated`);
  });

  it('refuses an unknown app, an unknown or revoked key, and a prefix too short, like the other commands', async () => {
    const unknownApp = await cli('read-keys', 'create', '--app-name', 'no_such_app', '--json');
    expect(unknownApp.exitCode).toBe(1);
    expect(JSON.parse(unknownApp.stdout)).toEqual({ error: 'There is no app named "no_such_app".' });

    const unknownKey = await cli('read-keys', 'revoke', '--key-prefix', 'tma_read_zzzzzzzz');
    expect(unknownKey.exitCode).toBe(1);
    expect(unknownKey.stderr).toBe('There is no read key starting with "tma_read_zzzzzzzz".\n');

    await service.createApp('reader_refused', 'refused.example.com');
    const { key } = json(await cli('read-keys', 'create', '--app-name', 'reader_refused', '--json'));
    const revoked = json(await cli('read-keys', 'revoke', '--key-prefix', key.slice(0, 17), '--json'));
    const again = await cli('read-keys', 'revoke', '--key-prefix', revoked.prefix, '--json');
    expect(again.exitCode).toBe(1);
    expect(JSON.parse(again.stdout).error).toBe(
      `The read key ${revoked.prefix} of reader_refused was already revoked (${revoked.revoked_at}); nothing changed.`,
    );

    const short = await cli('read-keys', 'revoke', '--key-prefix', 'tma_read_a');
    expect(short.exitCode).toBe(2);
    expect(short.stderr).toContain('tma_read_ and at least 4 more characters');
    expect(short.stderr).toContain('read-keys revoke --key-prefix <prefix>'); // the usage follows
  });
});
