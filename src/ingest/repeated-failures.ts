// A failure that repeats for every request (a full disk refuses them all) is logged once a while with how many times it
// happened since, not once per request: the log stays readable and small while the failure lasts.

/** the least time between two lines for one kind of failure */
export const REPEAT_LINE_EVERY_MS = 60_000;

export class RepeatedFailures {
  private readonly kinds = new Map<string, { lastLineAt: number; since: number }>();

  constructor(
    private readonly everyMs = REPEAT_LINE_EVERY_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Notes one failure of a kind: the number of them since the last line (this one included) when a line is due now,
   * null when this one is only counted
   */
  note(kind: string): number | null {
    const now = this.now();
    const seen = this.kinds.get(kind);
    if (seen && now - seen.lastLineAt < this.everyMs) {
      seen.since += 1;
      return null;
    }
    const since = (seen?.since ?? 0) + 1;
    this.kinds.set(kind, { lastLineAt: now, since: 0 });
    return since;
  }
}
