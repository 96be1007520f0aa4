// The contract suite's public entry for the rest of the package: the request builder that makes a
// valid, signed request of any operation from the spec's own examples (the bench drives servers with
// it). The suite itself is the program contract/run.ts.
export {
  buildRequest,
  firstResultExample,
  operation,
  requestExamples,
  SANDBOX_ACCESS_TOKEN,
  sandbox,
  signedBody,
  type BuildOptions,
} from './requests.ts';
// An answer read back as the clients of the protocol it is written in read it, typed by its operation's shapes.
export { readAnswer } from './http.ts';
// A value that breaks a field's schema, as the suite's checks make invalid requests.
export { breaking } from './checks.ts';
// The package's precompiled validators by schema name, as the suite judges with them.
export { requestValidators, resultValidators } from './http.ts';
