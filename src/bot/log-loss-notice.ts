// Tells the administrators, in their chats with the management bot, that this node's durable log was found damaged at
// start and how many acknowledged events it lost: a loss is said where someone acts on it, not only in a log line.
import type { Api } from 'grammy';
import type { LogLoss } from '../log/durable-log.ts';
import { countText } from './texts.ts';

export function lossNotice(loss: LogLoss): string {
  return [
    `⚠️ The durable log of this analytics service was found damaged at start: ${countText(loss.events)} acknowledged ` +
      `events in ${countText(loss.records)} requests are lost (log records ${loss.firstSeq}–${loss.lastSeq}).`,
    `Cause: ${loss.cause}.`,
    ...(loss.movedTo ? [`The damaged file was kept in ${loss.movedTo}.`] : []),
    'The service goes on taking events. /healthz says "events lost" until you acknowledge it on the server: ' +
      'npm run -s cli -- log acknowledge',
  ].join('\n');
}

/** one message to each administrator; a chat that cannot be reached is said in the service's log */
export async function tellAdministratorsOfLoss(
  api: Pick<Api, 'sendMessage'>,
  administrators: readonly string[],
  loss: LogLoss,
  log: { warn(details: object, message: string): void },
): Promise<void> {
  const text = lossNotice(loss);
  for (const chat of administrators)
    await api.sendMessage(chat, text).catch((error: unknown) => {
      // a chat id is an administrator's Telegram id: not logged
      log.warn({ failure: (error as Error).message }, 'telling an administrator of the lost events failed');
    });
}
