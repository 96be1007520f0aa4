// What one tool of the compatibility matrix (docs/TOOLS.md) reports after running on the published
// document. Each tool's runner (scripts/tools/<tool>.ts) returns one; the matrix runner renders them.

export interface ToolLimit {
  /** What does not work, in the reader's words. */
  what: string;
  /** Why: our document, or a reason outside it (a format the tool does not read, a signature it cannot compute). */
  why: string;
  /** What a team does about it. */
  workaround: string;
  /** True when the cause lies outside our document. */
  outsideDocument: boolean;
}

export interface ToolReport {
  tool: string;
  version: string;
  /** What the tool does with the document: 'contract tests', 'code generation', 'documentation', ... */
  role: string;
  /** Loaded without a lenient or permissive mode. */
  loadsStrict: boolean;
  /** The tool's own counts, where it has any. */
  checks?: { passed: number; failed: number; skipped: number };
  /** Operations (operationId + method) whose request reached a success (responseCode 0) against the sandbox. */
  operationsSucceeded?: { succeeded: number; total: number };
  /** What works, one line each. */
  works: string[];
  limits: ToolLimit[];
  /** Wall time of the tool's run, in seconds. */
  seconds: number;
}

/** What the matrix runner (scripts/tools/run.ts) hands each tool's runner. */
export interface ToolContext {
  /** generated/openapi.json and generated/openapi.yaml, absolute paths. */
  documentJson: string;
  documentYaml: string;
  /** A started sandbox (embedded store, fresh), e.g. http://127.0.0.1:4010. */
  baseUrl: string;
  /** A scratch folder of this tool's own, empty at the start. */
  workDir: string;
  /** scripts/tools, whose node_modules holds the tools (scripts/setup/tools.sh installs them). */
  toolsDir: string;
}

/** Every scripts/tools/<tool>.ts has one as its default export. */
export type ToolRunner = (ctx: ToolContext) => Promise<ToolReport>;
