// The operator CLI's server-keys commands, in process: the same JSON shapes as read-keys (create, list, revoke) and
// the same refusals.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, START_TIMEOUT_MS } from '../helpers/cli.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

/** who made what the operator CLI makes, as lists name them */
const OPERATOR_MADE = { ref: null, name: null, role: 'operator' };
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let service: TestService;
const cli = (...argv: string[]) => runCli(service, ...argv);

beforeAll(async () => {
  service = await startTestService();
}, START_TIMEOUT_MS);
afterAll(() => service?.close());

describe('server-keys commands', () => {
  it('create prints the key once, list shows prefixes only, revoke prints the revoked key', async () => {
    await service.createApp('cli_srv');
    const created = await cli('server-keys', 'create', '--app-name', 'cli_srv', '--json');
    expect(created.exitCode).toBe(0);
    expect(Object.keys(created.json)).toEqual(['key', 'app_name']);
    expect(created.json.key).toMatch(/^tma_server_[A-Za-z0-9_-]{32}$/);
    const prefix = created.json.key.slice(0, 19);

    const text = await cli('server-keys', 'create', '--app-name', 'cli_srv');
    expect(text.stdout).toMatch(/^New server key of cli_srv \(shown once\): tma_server_[A-Za-z0-9_-]{32}\n$/);

    const listed = await cli('server-keys', 'list', '--app-name', 'cli_srv', '--json');
    expect(listed.stdout).not.toContain(created.json.key);
    expect(listed.json).toHaveLength(2);
    for (const key of listed.json) {
      expect(Object.keys(key)).toEqual(['prefix', 'app_name', 'created_at', 'revoked_at', 'made_by']);
      expect(key.made_by).toEqual(OPERATOR_MADE);
      expect(key).toMatchObject({ app_name: 'cli_srv', created_at: expect.stringMatching(ISO), revoked_at: null });
    }
    // read keys are another list
    expect((await cli('read-keys', 'list', '--app-name', 'cli_srv', '--json')).json).toEqual([]);

    const revoked = await cli('server-keys', 'revoke', '--key-prefix', prefix, '--json');
    expect(revoked.json).toMatchObject({ prefix, app_name: 'cli_srv', revoked_at: expect.stringMatching(ISO) });
    const again = await cli('server-keys', 'revoke', '--key-prefix', prefix, '--json');
    expect(again.exitCode).toBe(1);
    expect(again.json.error).toContain('already revoked');
    const wrong = await cli('server-keys', 'revoke', '--key-prefix', 'tma_read_abcd', '--json');
    expect(wrong.exitCode).toBe(2);
    expect(wrong.json.error).toBe(
      '--key-prefix takes a server key prefix as listed: tma_server_ and at least 4 more characters',
    );
    const audit = await service.store.prisma.auditLog.findMany({
      where: { appName: 'cli_srv', action: { startsWith: 'server_key.' } },
    });
    expect(audit.map((entry) => entry.action).sort()).toEqual([
      'server_key.create',
      'server_key.create',
      'server_key.revoke',
    ]);
  });
});
