// The bot's data controls through bot.handleUpdate: the retention period chosen from the app's screen (asking first
// when it keeps less), erasing a user's data (id asked, confirmed, counts shown, audited, the id never stored), and
// other users refused on every button.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEXT } from '../../src/bot/texts.ts';
import { alertsOf, BotHarness, buttonsOf, textsOf } from '../helpers/bot-harness.ts';
import { makeEvent, postEvents } from '../helpers/events.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const ALICE = 1001;
const BOB = 2002;
const ADMIN = 9009;
/** users of Alice's mini app */
const ERASED_USER = 777000111;
const KEPT_USER = 777000222;
/** the users the administrator erases and the one erased under another id's name: each test has its own, so the tests
 * run in any order */
const ADMIN_ERASED_USER = 777000333;
const RENAMED_USER = 777000444;
/** the users of the steps of the owner's erase, one each: asked to confirm, pressed by another, audited */
const CONFIRMED_USER = 777000555;
const PRESSED_USER = 777000666;
const AUDITED_USER = 777000777;

let service: TestService;
let harness: BotHarness;
let id: number;

beforeAll(async () => {
  service = await startTestService({ ADMIN_TELEGRAM_IDS: String(ADMIN), RATE_LIMIT_MAX: '100000' });
  harness = new BotHarness(service.services);
  const { token, app } = await service.services.registry.createApp(
    { appName: 'alice_data', bot: '@alice_data_bot', domains: ['app.example.com'], ownerTelegramId: String(ALICE) },
    { surface: 'cli' },
  );
  id = app.appId;
  const sent = [
    ...[ERASED_USER, CONFIRMED_USER, PRESSED_USER, AUDITED_USER].flatMap((user) => [user, user]),
    KEPT_USER,
    ADMIN_ERASED_USER,
    RENAMED_USER,
  ].map((user) => makeEvent('alice_data', { user_id: user }));
  expect((await postEvents(service.url, sent, { token })).status).toBe(201);
  await service.loaded();
});
afterAll(() => service?.close());

const retentionOf = async () =>
  (await service.store.prisma.app.findUniqueOrThrow({ where: { id }, select: { retentionDays: true } })).retentionDays;

async function eventsOf(user: number): Promise<number> {
  const key = service.services.pseudonymiser.userKey(id, String(user));
  const [row] = await service.store.sql.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM events WHERE app_id = $1 AND user_key = decode($2, 'base64')`,
    [id, key.toString('base64')],
  );
  return row!.n;
}

/** the text of the last message of a step: inside a dialog, the new one comes last */
function lastText(calls: Awaited<ReturnType<BotHarness['send']>>): string {
  return textsOf(calls.filter((call) => call.method === 'sendMessage' || call.method === 'editMessageText').slice(-1));
}

/** a message's text as Telegram sends it back with a press: without its HTML markup */
const plain = (html: string) => html.replace(/<[^>]+>/g, '');

/** Alice's erase dialog on her app up to the confirmation of the user: the question asked and its buttons */
async function confirmationOf(user: number) {
  await harness.click(ALICE, `erase:${id}`);
  const confirm = await harness.send(ALICE, String(user));
  return { question: lastText(confirm), buttons: buttonsOf(confirm) };
}

/** every stored dialog state, as text */
async function dialogStates(): Promise<string> {
  return JSON.stringify(await service.store.prisma.botState.findMany());
}

describe('data controls in the bot', () => {
  it('shows the retention and the erase from the app screen, and sets the retention, asking first when it keeps less', async () => {
    expect(buttonsOf(await harness.click(ALICE, `app:${id}`))).toContain(`data:${id}`);
    const screen = await harness.click(ALICE, `data:${id}`);
    expect(textsOf(screen)).toContain('<b>Retention</b>: forever');
    expect(buttonsOf(screen)).toEqual([
      `ret:${id}:forever`,
      `ret:${id}:30`,
      `ret:${id}:90`,
      `ret:${id}:180`,
      `ret:${id}:365`,
      `erase:${id}`,
      `app:${id}`,
    ]);

    const question = await harness.click(ALICE, `ret:${id}:90`);
    expect(textsOf(question)).toContain('Keep the events of <b>alice_data</b> for 90 days?');
    expect(buttonsOf(question)).toEqual([`ret!:${id}:90`, `data:${id}`]);
    expect(await retentionOf()).toBeNull();

    const set = await harness.click(ALICE, `ret!:${id}:90`);
    expect(alertsOf(set)).toEqual(['Retention: 90 days']);
    expect(textsOf(set)).toContain('<b>Retention</b>: 90 days:');
    expect(await retentionOf()).toBe(90);
    // keeping more needs no question
    expect(alertsOf(await harness.click(ALICE, `ret:${id}:365`))).toEqual(['Retention: 1 year']);
    expect(await retentionOf()).toBe(365);
    expect(alertsOf(await harness.click(ALICE, `ret:${id}:forever`))).toEqual(['Retention: forever']);
    expect(await retentionOf()).toBeNull();
    // a value that is no choice changes nothing
    expect(alertsOf(await harness.click(ALICE, `ret!:${id}:7`))).toEqual(['']);
    expect(await retentionOf()).toBeNull();

    const audit = await service.store.prisma.auditLog.findMany({
      where: { appId: id, action: 'app.retention' },
      orderBy: { id: 'asc' },
    });
    expect(audit.map((entry) => [entry.surface, entry.detail])).toEqual([
      ['bot', { days: 90, previous: null, admin: false }],
      ['bot', { days: 365, previous: 90, admin: false }],
      ['bot', { days: null, previous: 365, admin: false }],
    ]);
  });

  it('asks the id of the user to erase, and explains a bad one', async () => {
    expect(textsOf(await harness.click(ALICE, `erase:${id}`))).toBe(TEXT.askErasedUser);
    const bad = textsOf(await harness.send(ALICE, 'user 777'));
    expect(bad).toContain('A Telegram user id is a positive number such as 123456789.');
    expect(bad).toContain(TEXT.askErasedUser);
    // the dialog still waits for an id: the other tests begin with none
    await harness.send(ALICE, '/cancel');
  });

  it('asks to confirm, naming the id and what goes, with no state kept and nothing deleted yet', async () => {
    const { question, buttons } = await confirmationOf(CONFIRMED_USER);
    // the id the owner typed is named back, with what of the user an erase deletes
    expect(question).toMatch(
      new RegExp(
        `^Erase Telegram user <code>${CONFIRMED_USER}</code> from <b>alice_data</b>\\? 2 events in 2 sessions of theirs are deleted, with their per-user rows\\.`,
      ),
    );
    const [erase, cancel] = buttons;
    expect(erase).toMatch(new RegExp(`^erase!:${id}:[A-Za-z0-9_-]{22}$`));
    expect(cancel).toBe(`data:${id}`);
    // the dialog is over: no state is kept, and nothing is deleted before the confirmation
    expect(await dialogStates()).toBe('[]');
    expect(await eventsOf(CONFIRMED_USER)).toBe(2);
  });

  it('gives someone else pressing the confirmation nothing', async () => {
    const [erase] = (await confirmationOf(PRESSED_USER)).buttons;
    expect(alertsOf(await harness.click(BOB, erase!))).toEqual([TEXT.notYours]);
    expect(await eventsOf(PRESSED_USER)).toBe(2);
  });

  it("erases the user's data on the confirmation and shows the counts, keeping the other users'", async () => {
    const { question, buttons } = await confirmationOf(ERASED_USER);
    // Telegram sends the confirmation's text along with the press, without its markup
    const done = await harness.click(ALICE, buttons[0]!, plain(question));
    expect(alertsOf(done)).toEqual(['Erasing…']);
    expect(textsOf(done)).toMatch(
      new RegExp(
        `^🧹 Erased Telegram user <code>${ERASED_USER}</code> from <b>alice_data</b>: 2 events, 2 sessions, 1 active day, 1 per-user record\\.\\n` +
          `Daily totals of events, users and sessions keep counting them, as anonymous numbers; what only they sent \\(a start_param, a custom event name or value\\) is deleted too\\.\\n` +
          `Reference in the audit log: <code>([A-Za-z0-9_-]{12})</code>$`,
      ),
    );
    expect(buttonsOf(done)).toEqual([`data:${id}`]);
    expect(await eventsOf(ERASED_USER)).toBe(0);
    expect(await eventsOf(KEPT_USER)).toBe(1);
  });

  it('records the erase under the reference it shows, and keeps the id nowhere', async () => {
    const { question, buttons } = await confirmationOf(AUDITED_USER);
    const done = await harness.click(ALICE, buttons[0]!, plain(question));
    // this erase's entry: the latest (the other tests may have erased before)
    const [entry] = await service.store.prisma.auditLog.findMany({
      where: { appId: id, action: 'user.erase' },
      orderBy: { id: 'desc' },
      take: 1,
    });
    expect(entry).toMatchObject({ surface: 'bot', detail: { complete: true, admin: false } });
    // recorded under the reference the owner was shown, to quote
    expect((entry!.detail as { user: string }).user).toBe(/<code>([A-Za-z0-9_-]{12})<\/code>$/.exec(textsOf(done))![1]);
    expect(JSON.stringify(entry!.detail)).not.toContain(String(AUDITED_USER));
    expect(await dialogStates()).not.toContain(String(AUDITED_USER));
    expect(JSON.stringify(harness.errors)).not.toContain(String(AUDITED_USER));
  });

  it('names no user when the confirmation pressed does not name the same id, and still gives the reference', async () => {
    await harness.click(ALICE, `erase:${id}`);
    const confirm = await harness.send(ALICE, String(RENAMED_USER));
    expect(lastText(confirm)).toContain(`<code>${RENAMED_USER}</code> from <b>alice_data</b>? 1 event in 1 session`);
    // a user with nothing stored is told so before anything is deleted
    await harness.click(ALICE, `erase:${id}`);
    expect(lastText(await harness.send(ALICE, '777000999'))).toContain('No event of theirs is stored');
    const [erase] = buttonsOf(confirm);
    const done = textsOf(await harness.click(ALICE, erase!, `Erase Telegram user ${ERASED_USER} from alice_data?`));
    expect(done).toMatch(/^🧹 Erased a user from <b>alice_data<\/b>: 1 event, 1 session,/);
    expect(done).toMatch(/\nReference in the audit log: <code>[A-Za-z0-9_-]{12}<\/code>$/);
    expect(done).not.toContain(String(ERASED_USER));
    expect(await eventsOf(RENAMED_USER)).toBe(0);
    expect(await eventsOf(KEPT_USER)).toBe(1);
  });

  it('leaves the dialog on /cancel, and lets an administrator erase too', async () => {
    await harness.click(ALICE, `erase:${id}`);
    expect(lastText(await harness.send(ALICE, '/cancel'))).toBe('Cancelled. Nothing was changed.');
    expect(await dialogStates()).toBe('[]');

    await harness.click(ADMIN, `erase:${id}`);
    const [erase] = buttonsOf(await harness.send(ADMIN, String(ADMIN_ERASED_USER)));
    expect(textsOf(await harness.click(ADMIN, erase!))).toContain(': 1 event, 1 session,');
    expect(await eventsOf(ADMIN_ERASED_USER)).toBe(0);
    const [entry] = await service.store.prisma.auditLog.findMany({
      where: { appId: id, action: 'user.erase', surface: 'bot' },
      orderBy: { id: 'desc' },
      take: 1,
    });
    expect(entry!.detail).toMatchObject({ admin: true });
  });

  it("refuses every data control button on someone else's app, and changes nothing", async () => {
    for (const data of [`data:${id}`, `ret:${id}:30`, `ret!:${id}:30`, `erase:${id}`]) {
      expect(alertsOf(await harness.click(BOB, data)), data).toEqual([TEXT.notYours]);
    }
    expect(await retentionOf()).toBeNull();
    expect(await dialogStates()).toBe('[]');
    expect(harness.errors).toEqual([]);
  });
});
