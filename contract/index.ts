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
// An answer in the form mode's XML, read back into its fields and typed as its schema says.
export { readXmlAnswer, typedAnswer, type XmlRead } from './xml.ts';
// A value that breaks a field's schema, as the suite's checks make invalid requests.
export { breaking } from './checks.ts';
// The package's precompiled validators by schema name, as the suite judges with them.
export { requestValidators, resultValidators } from './http.ts';
