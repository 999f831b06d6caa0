// Answers remembered for the credentials in use, the oldest forgotten first: the cache's grants, and what is derived
// from a credential (an app's public token comes with every request of all its users, so its keyed checksum and its
// hash are made once rather than on each request).

/** up to maxEntries answers by key; the oldest is forgotten first */
export class RecentAnswers<T> {
  private readonly answers = new Map<string, T>();

  constructor(private readonly maxEntries: number) {}

  get(key: string): T | undefined {
    return this.answers.get(key);
  }

  /** remembers the answer as the newest and returns it */
  remember(key: string, answer: T): T {
    this.answers.delete(key);
    this.answers.set(key, answer);
    if (this.answers.size > this.maxEntries) this.answers.delete(this.answers.keys().next().value!);
    return answer;
  }

  forget(key: string): void {
    this.answers.delete(key);
  }
}
