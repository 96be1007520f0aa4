// The command-line toolkit every bin of the package shares (options, --help, one-line errors, listening,
// the Node check, the published document): below sandbox/, mock/ and the payment-gateway program (cli/).
export {
  countOf,
  helpText,
  isMain,
  ownEntry,
  parse,
  portOf,
  runCommand,
  UsageError,
  version,
  parseOrExitCode,
  startCommand,
  type CommandOutput,
  usageMistake,
  type CommandSpec,
  type OptionSpec,
} from './args.ts';
export { listen, listenError } from './listen.ts';
export { checkNode } from './node-version.ts';
export { guidePath, packageFile, sandboxDefaults } from './spec.ts';
