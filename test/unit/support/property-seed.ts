/**
 * The seed every fast-check property runs with. Fixed by default, so a run is the
 * same on every machine; PROPERTY_SEED=random draws a fresh one and prints it, and
 * PROPERTY_SEED=<integer> replays a run (fast-check's failure message gives the
 * seed and the counterexample's path).
 */
export const DEFAULT_PROPERTY_SEED = 20_261_120;

export function propertySeed(requested: string | undefined): number {
  if (requested === undefined || requested === "") return DEFAULT_PROPERTY_SEED;
  if (requested === "random") {
    const seed = Math.floor(Math.random() * 2 ** 31);
    console.log(`property tests: fresh seed ${seed} (replay with PROPERTY_SEED=${seed})`);
    return seed;
  }
  const seed = Number(requested);
  if (!Number.isSafeInteger(seed)) throw new Error(`PROPERTY_SEED is "random" or an integer, not '${requested}'`);
  return seed;
}
