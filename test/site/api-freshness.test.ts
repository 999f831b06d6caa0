// Which reads of the site wait for the loader: only those that show what an app sent a moment ago (the app list, the
// dashboard with its last events, the live events), and only once the sign-in check let the request in. A made-up
// cookie, a stranger's request and the other cards are answered from what the store holds, without waiting.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SiteClient } from './site-harness.ts';
import { create, type SiteApi, startSiteApi } from './api-harness.ts';

let api: SiteApi;
/** the requests that waited for the loader, by path */
const waited: string[] = [];
let current = '';

beforeAll(async () => {
  api = await startSiteApi();
  await create(api.alice, 'fresh_app');
  const caughtUp = api.service.services.caughtUp;
  api.service.services.caughtUp = async () => {
    waited.push(current);
    await caughtUp();
  };
});
afterAll(() => api?.service.close());

async function waitsFor(client: SiteClient, path: string): Promise<{ status: number; waited: boolean }> {
  current = path;
  const before = waited.length;
  const { status } = await client.get(path);
  return { status, waited: waited.length > before };
}

describe('reads of the site and the loader', () => {
  it('never waits before the sign-in check: a made-up cookie or a stranger is answered at once', async () => {
    const madeUp = new SiteClient(api.service.url);
    madeUp.cookie = 'made-up-session-cookie';
    for (const path of ['/api/apps', '/api/apps/fresh_app/dashboard', '/api/apps/fresh_app/overview'])
      expect(await waitsFor(madeUp, path), path).toEqual({ status: 401, waited: false });
    expect(await waitsFor(api.bob, '/api/apps/fresh_app/dashboard')).toEqual({ status: 404, waited: false });
  });

  it('waits for what the app just sent where the answer shows it, and nowhere else', async () => {
    for (const path of [
      '/api/apps',
      '/api/apps/fresh_app',
      '/api/apps/fresh_app/dashboard?days=7',
      '/api/apps/fresh_app/recent',
    ])
      expect(await waitsFor(api.alice, path), path).toEqual({ status: 200, waited: true });
    for (const path of [
      '/api/me',
      '/api/apps/fresh_app/overview?days=7',
      '/api/apps/fresh_app/insights?days=7',
      '/api/apps/fresh_app/funnels',
      '/api/apps/fresh_app/members',
      '/api/apps/fresh_app/read-keys',
    ])
      expect(await waitsFor(api.alice, path), path).toEqual({ status: 200, waited: false });
  });
});
