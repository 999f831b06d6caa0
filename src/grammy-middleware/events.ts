// Turns one incoming message into the service's server event (bot-start, bot-command, successful-payment,
// refunded-payment) in the official client's envelope, or null when the message is none of those.
import type { Message, User } from 'grammy/types';

export type BotEventName = 'bot-start' | 'bot-command' | 'successful-payment' | 'refunded-payment';

export interface BotEvent {
  event_name: BotEventName;
  session_id: string;
  /** the raw Telegram id: the service replaces it with a keyed per-app hash before storing anything */
  user_id: number;
  app_name: string;
  is_premium: boolean;
  platform: string;
  locale?: string;
  start_param: string;
  client_timestamp: string;
  custom_data?: Record<string, string | number>;
}

export interface EventSource {
  appName: string;
  /** the bot's own username, so that "/cmd@another_bot" in a group is not counted as this bot's */
  botUsername?: string;
  sessionId(userId: number, at: number): string;
}

/** what the service's platform field says for everything this middleware sends */
export const BOT_PLATFORM = 'telegram-bot';

// the service refuses a whole batch over one field too long: cut here instead (Telegram's own limits are lower)
const MAX_START_PARAM = 512;
const MAX_COMMAND = 64;
const MAX_INVOICE_PAYLOAD = 128;

interface Command {
  name: string;
  payload: string;
}

/** a bot_command entity at the start of the text, addressed to this bot (or to no bot in particular) */
function commandOf(message: Message, botUsername: string | undefined): Command | null {
  const text = message.text;
  const entity = message.entities?.[0];
  if (text === undefined || entity?.type !== 'bot_command' || entity.offset !== 0) return null;
  const [name = '', mention] = text.slice(1, entity.length).split('@');
  if (name === '') return null;
  if (mention !== undefined && botUsername !== undefined && mention.toLowerCase() !== botUsername.toLowerCase())
    return null;
  return { name, payload: text.slice(entity.length).trim() };
}

type Details = Pick<BotEvent, 'event_name'> & Partial<Pick<BotEvent, 'start_param' | 'custom_data'>>;

function detailsOf(message: Message, botUsername: string | undefined): Details | null {
  const payment = message.successful_payment ?? message.refunded_payment;
  if (payment) {
    return {
      event_name: message.successful_payment ? 'successful-payment' : 'refunded-payment',
      custom_data: {
        amount: payment.total_amount,
        currency: payment.currency,
        invoice_payload: payment.invoice_payload.slice(0, MAX_INVOICE_PAYLOAD),
      },
    };
  }
  const command = commandOf(message, botUsername);
  if (!command) return null;
  if (command.name === 'start')
    return { event_name: 'bot-start', start_param: command.payload.slice(0, MAX_START_PARAM) };
  // only the command's name: its arguments are whatever the user typed and may be personal
  return { event_name: 'bot-command', custom_data: { command: command.name.slice(0, MAX_COMMAND) } };
}

export function botEventOf(
  message: Message | undefined,
  from: User | undefined,
  source: EventSource,
  at: number,
): BotEvent | null {
  if (!message || !from || from.is_bot) return null;
  const details = detailsOf(message, source.botUsername);
  if (!details) return null;
  const event: BotEvent = {
    event_name: details.event_name,
    session_id: source.sessionId(from.id, at),
    user_id: from.id,
    app_name: source.appName,
    is_premium: from.is_premium === true,
    platform: BOT_PLATFORM,
    start_param: details.start_param ?? '',
    client_timestamp: String(at),
  };
  if (from.language_code) event.locale = from.language_code;
  if (details.custom_data) event.custom_data = details.custom_data;
  return event;
}
