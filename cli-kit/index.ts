// The command-line conventions every bin of the package shares (options, --help, one-line errors).
export {
  countOf,
  helpText,
  isMain,
  parse,
  portOf,
  runCommand,
  UsageError,
  version,
  type CommandSpec,
  type OptionSpec,
} from './args.ts';
export { listen, listenError } from './listen.ts';
export { checkNode } from './node-version.ts';
export { packageFile, sandboxDefaults } from './spec.ts';
