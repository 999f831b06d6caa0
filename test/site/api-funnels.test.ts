// Saved funnels through the site API: the wallet funnel comes first and stays, an owner saves, edits and deletes
// funnels of their own (validated like the read API's funnel query), within a limit, and nobody else sees them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_FUNNEL, MAX_SAVED_FUNNELS } from '../../src/events/read/saved-funnels.ts';
import { makeEvent, postEvents } from '../helpers/events.ts';
import type { TestService } from '../helpers/service.ts';
import { create, domainOf, startSiteApi } from './api-harness.ts';
import type { SiteClient } from './site-harness.ts';

let service: TestService;
let alice: SiteClient;
let bob: SiteClient;

beforeAll(async () => {
  ({ service, alice, bob } = await startSiteApi());
});
afterAll(() => service?.close());

/** the saved funnels' route of an app */
const funnelsOf = (app: string) => `/api/apps/${app}/funnels`;

/** a new app of Alice's with one session (app-init, then level_up twice), so saved steps answer as a funnel */
async function appWithLevels(app: string): Promise<void> {
  const token = await create(alice, app);
  const session = crypto.randomUUID();
  const events = ['app-init', 'custom-event', 'custom-event'].map((name, index) =>
    makeEvent(app, {
      event_name: name,
      session_id: session,
      user_id: 7300000001,
      client_timestamp: String(Date.now() - 60_000 + index * 1000),
      ...(name === 'custom-event' ? { custom_data: { name: 'level_up', level: index } } : {}),
    }),
  );
  const origin = `https://${domainOf(app)}`;
  expect((await postEvents(service.url, events, { token, origin })).status).toBe(201);
  await service.loaded();
}

// every case works on an app of its own: the saved funnels one case makes would change what another lists
describe('saved funnels', () => {
  it('lists the wallet funnel first; saves, edits and deletes funnels of the owner', async () => {
    const APP = 'funnel_app';
    const path = funnelsOf(APP);
    await appWithLevels(APP);
    expect((await alice.get(path)).json).toEqual([DEFAULT_FUNNEL]);
    const saved = await alice.post(path, { name: 'Levels', steps: ['app-init', 'level_up[level=2]'], by: 'session' });
    expect(saved.status, saved.text).toBe(201);
    expect(saved.json).toEqual({
      id: expect.any(Number),
      name: 'Levels',
      steps: ['app-init', 'level_up[level=2]'],
      by: 'session',
      window: '1d',
    });
    // the saved steps answer as a funnel
    const funnel = await alice.get(`/api/apps/${APP}/funnel?days=7&steps=app-init,level_up[level=2]&by=session`);
    expect(funnel.json.steps.map((step: { count: number }) => step.count)).toEqual([1, 1]);

    // saving the same name again edits it
    const edited = await alice.post(path, { name: 'Levels', steps: 'app-init,level_up', window: '1h' });
    expect(edited.json).toMatchObject({ id: saved.json.id, steps: ['app-init', 'level_up'], by: 'user', window: '1h' });
    expect((await alice.get(path)).json).toEqual([DEFAULT_FUNNEL, edited.json]);

    expect((await alice.delete(`${path}/${saved.json.id}`)).status).toBe(204);
    expect((await alice.get(path)).json).toEqual([DEFAULT_FUNNEL]);
    expect((await alice.delete(`${path}/${saved.json.id}`)).status).toBe(404);
  });

  it('refuses a funnel without a name, with bad steps, NUL or under the default name; at most 20 per app', async () => {
    const path = funnelsOf('funnel_limits');
    await create(alice, 'funnel_limits');
    const refusals: [Record<string, unknown>, string, RegExp][] = [
      [{ steps: ['app-init', 'app-hide'] }, 'name', /needs a name/],
      [{ name: 'One step', steps: ['app-init'] }, 'steps', /"steps" must name 2 to 6/],
      [
        { name: 'Slow', steps: ['app-init', 'app-hide'], window: '1y' },
        'window',
        /^The field "window" must be a duration/,
      ],
      [
        { name: 'Who', steps: ['app-init', 'app-hide'], by: 'device' },
        'by',
        /^The field "by" must be "user" or "session"/,
      ],
      [{ name: DEFAULT_FUNNEL.name, steps: ['app-init', 'app-hide'] }, 'name', /is the default funnel/],
      // text the store cannot hold
      [{ name: 'x\u0000', steps: ['app-init', 'app-hide'] }, 'name', /must not contain a NUL character/],
      [{ name: 'Nul', steps: ['app-init', 'a\u0000b'] }, 'steps', /must not contain a NUL character/],
    ];
    for (const [body, field, message] of refusals) {
      const answer = await alice.post(path, body);
      expect({ status: answer.status, field: answer.json.field }).toEqual({ status: 400, field });
      expect(answer.json.message).toMatch(message);
    }
    for (let n = 0; n < MAX_SAVED_FUNNELS; n++)
      expect((await alice.post(path, { name: `F${n}`, steps: 'app-init,app-hide' })).status).toBe(201);
    const full = await alice.post(path, { name: 'One more', steps: 'app-init,app-hide' });
    expect(full.status).toBe(400);
    expect(full.json.message).toBe(`An app keeps at most ${MAX_SAVED_FUNNELS} funnels; delete one first.`);
    expect((await alice.post(path, { name: 'F0', steps: 'app-init,app-hide,app-init' })).status).toBe(201);
    expect((await alice.get(path)).json).toHaveLength(MAX_SAVED_FUNNELS + 1);
  });

  it("keeps another user out of the app's funnels", async () => {
    const path = funnelsOf('funnel_private');
    await create(alice, 'funnel_private');
    const saved = await alice.post(path, { name: 'Private', steps: 'app-init,app-hide' });
    expect(saved.status, saved.text).toBe(201);
    const first = saved.json;
    for (const answer of [
      await bob.get(path),
      await bob.post(path, { name: 'Mine', steps: 'app-init,app-hide' }),
      await bob.delete(`${path}/${first.id}`),
    ])
      expect(answer.status).toBe(404);
    expect((await alice.get(path)).json).toContainEqual(first);
  });
});
