// How long the page waits before it opens its table's stream again: the nominal wait (1 s after the
// first failure, 2 s after the second … 5 s at most) times a share drawn between LOW and HIGH ("equal
// jitter", the rule of services/cardroom/client/backoff.py), so that the browsers one gateway restart
// dropped do not all come back in the same instant, attempt after attempt.

export const LOW = 0.5;
export const HIGH = 1.5;

/** Milliseconds to wait before reconnecting after `attempt` failures in a row (0: the first). */
export function reconnectDelayMs(attempt: number, random: () => number = Math.random): number {
  const nominal = 1000 * Math.min(attempt + 1, 5);
  return nominal * (LOW + (HIGH - LOW) * random());
}
