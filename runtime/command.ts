// How a person runs the `payment-gateway` program where this copy of the package runs: in an install
// the package's bin (`payment-gateway`, on the PATH of npm scripts and `npx`); in a checkout of the
// repository no bin is linked, and the program is the npm script (`npm run -s cli -- …`). Every line
// that tells someone a command to paste (the suite's `replay:` and `again:`, the sandbox's -1 hint)
// names it through here, so that the command works where it was printed.

/** The command that starts the program, for a module at `moduleUrl` (this one's by default). */
export function cliCommand(moduleUrl: string = import.meta.url): string {
  return moduleUrl.includes('/node_modules/') ? 'payment-gateway' : 'npm run -s cli --';
}

export const CLI_COMMAND = cliCommand();
