// Runs an erase's statement again when the server chose it to break a deadlock: it takes the user's part out of count
// rows that the loader's commits lock too, and a commit and the statement may meet on two rows in opposite orders.
/** SQLSTATE deadlock_detected: the statement was rolled back whole, so running it again is safe */
const DEADLOCK = '40P01';
const ATTEMPTS = 5;

export async function retriedOnDeadlock<T>(statement: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await statement();
    } catch (error) {
      if ((error as { code?: unknown }).code !== DEADLOCK || attempt === ATTEMPTS) throw error;
    }
  }
}
