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
// A value that breaks a field's schema, as the suite's checks make invalid requests; and the suite's
// answer checks applied to an answer recorded from another server (a public client's fixture).
export { breaking, recordedAnswerViolations } from './checks.ts';
// An HTTP response read as the suite reads it (in the protocol of the request, typed by the operation's shapes).
export { answerOf, type Answer } from './http.ts';
// The package's precompiled validators by schema name, as the suite judges with them.
export { requestValidators, resultValidators } from './http.ts';
