// The operator CLI's read-keys commands as operators run them: the exact JSON of create, list and revoke, the text
// without --json, and refusals with the other commands' exit codes.
import { describe, expect, it } from 'vitest';
import { runCli } from './helpers/service-process.ts';
import { tempDir } from './helpers/service.ts';

/** each CLI run is a new Node process that opens the store: seconds apiece on a loaded 2-core machine */
/** who made what the operator CLI makes, as lists name them */
const OPERATOR_MADE = { ref: null, name: null, role: 'operator' };
const CLI_TEST_TIMEOUT = 240_000;

function json(result: { exitCode: number | null; stdout: string; stderr: string }) {
  expect(result.exitCode, result.stderr).toBe(0);
  expect(result.stdout.trim().split('\n')).toHaveLength(1); // one JSON document and nothing else
  return JSON.parse(result.stdout);
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('read-keys commands', () => {
  const env = { DATA_DIR: tempDir() };

  it(
    'create prints the key once, list shows prefixes only, revoke prints the revoked key',
    async () => {
      json(
        await runCli(env, [
          'tokens',
          'create',
          '--bot',
          '@reader_demo_bot',
          '--domain',
          'reader.example.com',
          '--app-name',
          'reader_demo',
          '--json',
        ]),
      );
      const created = await runCli(env, ['read-keys', 'create', '--app-name', 'reader_demo', '--json']);
      const document = json(created);
      expect(Object.keys(document)).toEqual(['key', 'app_name']);
      expect(document.app_name).toBe('reader_demo');
      expect(document.key).toMatch(/^tma_read_[A-Za-z0-9_-]{32}$/);
      expect(created.stdout).toBe(`{"key":"${document.key}","app_name":"reader_demo"}\n`);
      const prefix = document.key.slice(0, 17);

      const text = await runCli(env, ['read-keys', 'create', '--app-name', 'reader_demo']);
      expect(text.exitCode, text.stderr).toBe(0);
      const second = /^New read key of reader_demo \(shown once\): (tma_read_[A-Za-z0-9_-]{32})\n$/.exec(text.stdout);
      expect(second, text.stdout).not.toBeNull();

      const listed = await runCli(env, ['read-keys', 'list', '--app-name', 'reader_demo', '--json']);
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
      expect(keys.map((key: { prefix: string }) => key.prefix).sort()).toEqual(
        [prefix, second![1]!.slice(0, 17)].sort(),
      );

      const revoked = json(await runCli(env, ['read-keys', 'revoke', '--key-prefix', prefix, '--json']));
      expect(revoked).toEqual({
        prefix,
        app_name: 'reader_demo',
        created_at: keys.find((key: { prefix: string }) => key.prefix === prefix).created_at,
        revoked_at: expect.stringMatching(ISO),
        made_by: OPERATOR_MADE,
      });
      // active first: the revoked key comes last
      const after = json(await runCli(env, ['read-keys', 'list', '--app-name', 'reader_demo', '--json']));
      expect(after.map((key: { prefix: string; revoked_at: string | null }) => [key.prefix, key.revoked_at])).toEqual([
        [second![1]!.slice(0, 17), null],
        [prefix, revoked.revoked_at],
      ]);

      const listText = await runCli(env, ['read-keys', 'list', '--app-name', 'reader_demo']);
      expect(listText.stdout).toContain(
        `${prefix}…\tcreated ${revoked.created_at} by the operator\trevoked ${revoked.revoked_at}`,
      );
      expect(listText.stdout).toContain(`${second![1]!.slice(0, 17)}…\tcreated`);
    },
    CLI_TEST_TIMEOUT,
  );

  it(
    'refuses an unknown app, an unknown or revoked key, and a prefix too short, like the other commands',
    async () => {
      const unknownApp = await runCli(env, ['read-keys', 'create', '--app-name', 'no_such_app', '--json']);
      expect(unknownApp.exitCode).toBe(1);
      expect(JSON.parse(unknownApp.stdout)).toEqual({ error: 'There is no app named "no_such_app".' });

      const unknownKey = await runCli(env, ['read-keys', 'revoke', '--key-prefix', 'tma_read_zzzzzzzz']);
      expect(unknownKey.exitCode).toBe(1);
      expect(unknownKey.stderr).toBe('There is no read key starting with "tma_read_zzzzzzzz".\n');

      const [revoked] = json(await runCli(env, ['read-keys', 'list', '--app-name', 'reader_demo', '--json'])).filter(
        (key: { revoked_at: string | null }) => key.revoked_at !== null,
      );
      const again = await runCli(env, ['read-keys', 'revoke', '--key-prefix', revoked.prefix, '--json']);
      expect(again.exitCode).toBe(1);
      expect(JSON.parse(again.stdout).error).toBe(
        `The read key ${revoked.prefix} of reader_demo was already revoked (${revoked.revoked_at}); nothing changed.`,
      );

      const short = await runCli(env, ['read-keys', 'revoke', '--key-prefix', 'tma_read_a']);
      expect(short.exitCode).toBe(2);
      expect(short.stderr).toContain('tma_read_ and at least 4 more characters');
      expect(short.stderr).toContain('read-keys revoke --key-prefix <prefix>'); // the usage follows
    },
    CLI_TEST_TIMEOUT,
  );
});
