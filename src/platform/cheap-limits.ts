// What keeps a rate limiter's work per request small when one client floods it: its counter key hashed once per run
// of the same identity, and each 429 answer built once per wait it names, then answered again as it is.

/**
 * hash(identity), remembered for the last identity only: a flood comes from one client, so its run of requests costs
 * one keyed hash; only the last identity is held, never a list of them
 */
export function lastKeyMemo(hash: (identity: string) => string): (identity: string) => string {
  let lastIdentity: string | undefined;
  let lastKey = '';
  return (identity) => {
    if (identity !== lastIdentity) {
      lastKey = hash(identity);
      lastIdentity = identity;
    }
    return lastKey;
  };
}

/** build(after) once per wait ("37 seconds"; a minute's window names at most 60 of them): throwing it costs no new Error */
export function refusalPerWait<T>(build: (after: string) => T): (after: string) => T {
  const built = new Map<string, T>();
  return (after) => {
    let answer = built.get(after);
    if (answer === undefined) {
      answer = build(after);
      built.set(after, answer);
    }
    return answer;
  };
}
