// Answers remembered for the few credentials in use: an app's public token comes with every request of all its users,
// so what is derived from it (its keyed checksum, its hash) is made once rather than on each request.

/** up to maxEntries answers by key; the oldest is forgotten first */
export class RecentAnswers<T> {
  private readonly answers = new Map<string, T>();

  constructor(private readonly maxEntries: number) {}

  get(key: string): T | undefined {
    return this.answers.get(key);
  }

  /** remembers the answer and returns it */
  remember(key: string, answer: T): T {
    this.answers.set(key, answer);
    if (this.answers.size > this.maxEntries) this.answers.delete(this.answers.keys().next().value!);
    return answer;
  }
}
