// The bot id the integrator's own bot reports beside its server key's events (the grammY middleware's ctx.me.id):
// given to its app when the app has none, asked of the store once per app on each node.
import type { TokenRegistry } from './registry.ts';

export class ReportedBotIds {
  /** apps this node asked the store about (kept or not): a bot reports its id with every request */
  private readonly asked = new Set<number>();

  constructor(
    private readonly registry: Pick<TokenRegistry, 'reportBotId'>,
    private readonly onError: (error: unknown, message: string) => void,
  ) {}

  /** never waits and never throws: the events go on whatever the store answers */
  report(appId: number, botId: string): void {
    if (this.asked.has(appId)) return;
    this.asked.add(appId);
    this.registry.reportBotId(appId, botId).catch((error) => {
      this.asked.delete(appId);
      this.onError(error, "keeping the bot id a server key's bot reported failed");
    });
  }
}
