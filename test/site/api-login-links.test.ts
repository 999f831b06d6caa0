// Operator login links made with `cli login-link`: one sign-in per link, forged, altered and expired links refused.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCommand } from '../../src/cli/commands.ts';
import type { TestService } from '../helpers/service.ts';
import { ADMIN, PUBLIC_URL, startSiteApi } from './api-harness.ts';
import { SiteClient } from './site-harness.ts';

let service: TestService;

beforeAll(async () => {
  ({ service } = await startSiteApi());
});
afterAll(() => service?.close());

describe('operator login links (cli login-link)', () => {
  async function cliLink(telegramId: string): Promise<string> {
    const result = await runCommand(service.services, ['login-link', '--telegram-id', telegramId, '--json']);
    expect(result.exitCode, result.stderr).toBe(0);
    const url = new URL(JSON.parse(result.stdout).url);
    expect(url.origin).toBe(PUBLIC_URL);
    expect(url.pathname).toBe('/login/link');
    return url.pathname + url.search;
  }

  it('signs in once; the same link is refused the second time', async () => {
    const link = await cliLink('7007');
    const first = new SiteClient(service.url);
    const answer = await first.get(link);
    expect(answer.status).toBe(302);
    expect(answer.headers.get('location')).toBe('/analytics');
    expect((await first.get('/api/me')).json).toEqual({ name: 'Operator 7007', is_admin: false });
    const second = new SiteClient(service.url);
    const again = await second.get(link);
    expect(again.status).toBe(403);
    expect(again.text).toContain('This login link is invalid, expired or was already used.');
    expect(again.sessionCookie).toBeUndefined();
  });

  it('lets exactly one of two simultaneous uses through', async () => {
    const link = await cliLink('7008');
    const answers = await Promise.all([1, 2, 3].map(() => new SiteClient(service.url).get(link)));
    expect(answers.map((answer) => answer.status).sort()).toEqual([302, 403, 403]);
  });

  it('refuses forged, altered and expired links', async () => {
    const token = new URL(await cliLink('7009'), 'http://x').searchParams.get('token')!;
    const [body, signature] = token.split('.') as [string, string];
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    expect(payload.id).toBe('7009');
    const asAdmin = Buffer.from(JSON.stringify({ ...payload, id: String(ADMIN.id) })).toString('base64url');
    vi.useFakeTimers({ toFake: ['Date'] });
    let expired: string;
    try {
      vi.setSystemTime(Date.now() - 16 * 60_000); // made 16 minutes ago: valid for 15
      expired = await cliLink('7010');
    } finally {
      vi.useRealTimers();
    }
    const refused = {
      'id changed (to the admin)': `/login/link?token=${asAdmin}.${signature}`,
      'signature of another link': `/login/link?token=${asAdmin}.${signature.split('').reverse().join('')}`,
      'no signature': `/login/link?token=${body}`,
      garbage: '/login/link?token=not-a-token',
      'no token': '/login/link',
      expired,
    };
    for (const [what, link] of Object.entries(refused)) {
      const answer = await new SiteClient(service.url).get(link);
      expect(answer.status, what).toBe(403);
      expect(answer.sessionCookie, what).toBeUndefined();
    }
    // the genuine link was not used up by the attempts
    expect((await new SiteClient(service.url).get(`/login/link?token=${token}`)).status).toBe(302);
  });
});
