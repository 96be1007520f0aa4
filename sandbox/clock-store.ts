// The sandbox clock's shared offset, kept in the store: instances on one database see the same time
// after the control API moves it on any of them. An advance is added in the store (offset + ms, in
// one statement, so advances made at once on two instances both count) and read back; every
// instance reads it again before each request, delivery run and batch slice (`sync`).
import type { Clock } from './clock.ts';
import type { Store } from './store.ts';

const READ = "SELECT offset_ms FROM sandbox_clock WHERE name = 'sandbox'";

/** Takes the store's offset into the clock. */
export async function sync(store: Store, clock: Clock): Promise<void> {
  const row = await store.get<{ offset_ms: number }>(READ);
  clock.share(Number(row?.offset_ms ?? 0));
}

/** Moves the shared clock on by ms, for every instance on the store. */
export function advance(store: Store, clock: Clock, ms: number): Promise<void> {
  return store.transaction(async () => {
    await store.run("INSERT OR IGNORE INTO sandbox_clock (name, offset_ms) VALUES ('sandbox', 0)");
    await store.run("UPDATE sandbox_clock SET offset_ms = offset_ms + ? WHERE name = 'sandbox'", Math.round(ms));
    await sync(store, clock);
  });
}
