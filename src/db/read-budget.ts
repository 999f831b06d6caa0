// The time budget of a read (dashboards, insights, the read API, the public link, the bot, alerts, ranking, CSV):
// past it the read is given up and its caller told so in words, instead of holding a connection the service needs.

/** the budget as people read it: "5 s", "0.5 s" */
export const budgetText = (budgetMs: number): string => `${Number((budgetMs / 1000).toFixed(3))} s`;

export const readBudgetMessage = (budgetMs: number): string =>
  `This query took longer than ${budgetText(budgetMs)}; try a shorter period or fewer filters.`;

/**
 * The most reads that wait for the store (its thread, or a server's read connections); the next is refused at once.
 * A page or a bot screen sends many small reads at once (an insights page: a dozen; a list of apps reads in two),
 * so the queue holds several of them; a read that waits past its budget is given up anyway.
 */
export const READ_QUEUE_LIMIT = 64;

/** a read refused before it ran: as many wait already as the store lets wait */
export const READS_WAITING_MESSAGE = 'Too many queries are waiting; try again in a moment.';

/**
 * A read that outran its budget, or could not even start because as many reads wait already as the store lets
 * wait (it would outrun its budget in the queue): the HTTP surfaces answer 503 with the message, the bot says it.
 */
export class ReadBudgetError extends Error {
  constructor(
    readonly budgetMs: number,
    readonly reason: 'slow' | 'busy',
  ) {
    super(reason === 'busy' ? READS_WAITING_MESSAGE : readBudgetMessage(budgetMs));
    this.name = 'ReadBudgetError';
  }
}

/** PostgreSQL's "canceling statement due to statement timeout" (SQLSTATE 57014 query_canceled) */
export function isStatementTimeout(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '57014';
}
