// The headless Chromium that the docs' browser tests and the tools matrix's Scalar page run in, and the
// flags both start it with. Debian's headless shell (the package chromium-headless-shell, installed by
// scripts/setup/chromium.sh), as Playwright itself runs headless Chromium: the three docs test files
// cost the machine 51 s of CPU with it against 57 s with Debian's full `chromium` (two runs each, in
// turns), the same checks passing.
export const CHROMIUM = '/usr/bin/chromium-headless-shell';

/** No background traffic, and every host but the loopback unresolvable: a request elsewhere fails at once. */
export const CHROMIUM_FLAGS: readonly string[] = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost',
];
