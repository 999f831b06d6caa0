// The site API on launches Telegram signed: an app registered with its bot's id (the token refused in its place), the
// id set and forgotten by who may, and the dashboard's verified users, launch outcomes in words, and every card
// narrowed to verified traffic.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeEvent, postEvents } from '../helpers/events.ts';
import type { TestService } from '../helpers/service.ts';
import { create, domainOf, startSiteApi } from './api-harness.ts';
import { SITE_LAUNCHES, type SiteClient } from './site-harness.ts';

const BOT_ID = 7_111_222_333;

let service: TestService;
let alice: SiteClient;
let bob: SiteClient;

beforeAll(async () => {
  ({ service, alice, bob } = await startSiteApi());
});
afterAll(() => service?.close());

describe("an app's bot id and its launches on the site", () => {
  it("registers an app with its bot's id, refuses the bot's token in its place, and sets or forgets the id", async () => {
    const form = { bot: '@ids_site_bot', domain: 'ids-site.example.com', app_name: 'ids_site' };
    const pasted = await alice.post('/api/apps', { ...form, bot_id: `${BOT_ID}:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw` });
    expect(pasted.status).toBe(400);
    expect(pasted.json).toMatchObject({ field: 'bot_id' });
    expect(pasted.text).toContain("That is the bot's token");
    expect(pasted.text).not.toContain('AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw');
    const created = await alice.post('/api/apps', { ...form, bot_id: String(BOT_ID) });
    expect(created.status, created.text).toBe(201);
    expect(created.json).toMatchObject({ app_name: 'ids_site', bot_id: String(BOT_ID) });

    expect((await alice.post('/api/apps/ids_site/bot-id', { bot_id: '42' })).json).toMatchObject({ bot_id: '42' });
    expect((await alice.post('/api/apps/ids_site/bot-id', { bot_id: null })).json).toMatchObject({ bot_id: null });
    expect((await alice.post('/api/apps/ids_site/bot-id', {})).status).toBe(400);
    // someone else's app is not there for them
    expect((await bob.post('/api/apps/ids_site/bot-id', { bot_id: '43' })).status).toBe(404);
  });

  it('shows verified users, the launches by outcome in words, and narrows every card to verified traffic', async () => {
    const token = await create(alice, 'launch_site');
    const without = (await alice.get('/api/apps/launch_site/dashboard?days=7')).json;
    expect(without.app.bot_id).toBeNull();
    await alice.post('/api/apps/launch_site/bot-id', { bot_id: String(BOT_ID) });

    const origin = `https://${domainOf('launch_site')}`;
    const verifiedSession = crypto.randomUUID();
    const signed = (user: number) => SITE_LAUNCHES.sign({ botId: BOT_ID, user: { id: user, first_name: 'V' } });
    const sent = await postEvents(
      service.url,
      [
        makeEvent('launch_site', { user_id: 11, session_id: verifiedSession, init_data: signed(11) }),
        makeEvent('launch_site', { user_id: 11, session_id: verifiedSession, event_name: 'app-hide' }),
        makeEvent('launch_site', { user_id: 12 }),
        makeEvent('launch_site', { user_id: 13, init_data: signed(14) }),
      ],
      { token, origin },
    );
    expect(sent.status, sent.text).toBe(201);
    await service.loaded();

    const dashboard = (await alice.get('/api/apps/launch_site/dashboard?days=7')).json;
    expect(dashboard.totals).toEqual({ events: 4, users: 3, verifiedUsers: 1, sessions: 3 });
    expect(dashboard.launch_checks).toMatchObject({
      launches: 3,
      verified_users: 1,
      verified_sessions: 1,
      outcomes: { verified: 1, no_proof: 1, other_user: 1 },
    });
    expect(dashboard.launch_checks.unverified).toEqual([
      {
        outcome: 'no_proof',
        launches: 1,
        text: "sent no launch data (the official @telegram-apps/analytics client and pages without this service's SDK never do)",
      },
      { outcome: 'other_user', launches: 1, text: "carried another user's launch data" },
    ]);
    const verified = (await alice.get('/api/apps/launch_site/dashboard?days=7&verified=true')).json;
    expect(verified.totals).toEqual({ events: 2, users: 1, verifiedUsers: 1, sessions: 1 });
    const rest = (await alice.get('/api/apps/launch_site/insights?days=7&verified=false')).json;
    expect(rest.summary).toMatchObject({ events: 2, users: 2, verified_users: 0 });
    const bad = await alice.get('/api/apps/launch_site/dashboard?days=7&verified=maybe');
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('The query parameter \\"verified\\" must be \\"true\\" or \\"false\\".');
  });
});
