// One instance's notification loop for the kill test: claims due notifications on the store at
// argv[2] as argv[3], posts each to argv[4], records the attempt; leases of LEASE_MS.
import { claimDue, renew, settle } from '../../sandbox/delivery-queue.ts';
import { openStore } from '../../sandbox/open-store.ts';

const [url, by, receiver] = process.argv.slice(2) as [string, string, string];
const LEASE_MS = 1500;
const store = await openStore(url);
const iso = (ms = 0) => new Date(Date.now() + ms).toISOString();
process.send?.('ready');
for (;;) {
  const claimed = await claimDue(store, { by, now: iso(), until: iso(LEASE_MS), maxAttempts: 10, limit: 5 });
  if (claimed.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
  for (const n of claimed) {
    // As the notifier does: a claim that outlasted its lease (a busy machine) and was taken is not posted.
    if (!(await renew(store, n.id, by, iso(LEASE_MS)))) continue;
    let status: number | null = null;
    try {
      status = (await fetch(receiver, { method: 'POST', body: JSON.stringify({ subject: n.subject, by }) })).status;
    } catch {}
    await settle(store, n.id, by, { ok: status === 200, status, at: iso(), retryAt: iso(200) });
  }
}
