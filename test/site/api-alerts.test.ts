// Alert settings through the site API: the signed-in owner reads and changes what the bot tells their chat about an
// app (the same subscription /alerts changes), bad values are refused and change nothing, and nobody else gets in.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import { ALICE, create, startSiteApi } from './api-harness.ts';
import type { SiteClient } from './site-harness.ts';

let service: TestService;
let alice: SiteClient;
let bob: SiteClient;

beforeAll(async () => {
  ({ service, alice, bob } = await startSiteApi());
});
afterAll(() => service?.close());

describe('alert settings', () => {
  const APP = 'alerting_app';
  const path = `/api/apps/${APP}/alerts`;
  const DEFAULTS = {
    silence_hours: 6,
    refusals: true,
    quota: true,
    first_event: true,
    digest: false,
    silence_choices: [null, 1, 6, 24],
  };

  beforeAll(() => create(alice, APP));

  it('shows the defaults, saves changes, and the bot sees the same subscription', async () => {
    expect((await alice.get(path)).json).toEqual(DEFAULTS);
    const saved = await alice.post(path, { silence_hours: 24, digest: true, refusals: false });
    expect(saved.status, saved.text).toBe(200);
    expect(saved.json).toEqual({ ...DEFAULTS, silence_hours: 24, digest: true, refusals: false });
    expect((await alice.post(path, { silence_hours: null })).json.silence_hours).toBeNull();
    expect((await alice.get(path)).json).toEqual({ ...DEFAULTS, silence_hours: null, digest: true, refusals: false });

    const app = await service.services.registry.getApp(APP, { surface: 'cli', isAdmin: true });
    const subscription = await service.services.alertSubscriptions.subscribe(app.appId, String(ALICE.id));
    expect(subscription).toMatchObject({ silenceHours: null, digest: true, refusals: false });
  });

  it('refuses bad values with a clear message and changes nothing', async () => {
    const before = (await alice.get(path)).json;
    for (const [body, message] of [
      [{ silence_hours: 5 }, 'silence_hours must be null (off), 1, 6 or 24.'],
      [{ digest: 'yes' }, 'digest must be true or false.'],
      [[1, 2], 'Send the alert settings as a JSON object.'],
    ] as const) {
      const answer = await alice.post(path, body);
      expect(answer.status).toBe(400);
      expect(answer.json.message).toBe(message);
    }
    expect((await alice.get(path)).json).toEqual(before);
  });

  it('answers another user as if the app did not exist', async () => {
    expect((await bob.get(path)).status).toBe(404);
    expect((await bob.post(path, { digest: true })).status).toBe(404);
  });
});
