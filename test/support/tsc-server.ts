// One TypeScript compiler for a test run: the type tests' program (test/support/type-check.ts) and the
// package copies' (test/support/package-copy.ts) are checked here, one after the other, by one long-lived
// process that test/support/shared-servers.global.ts starts when a file first asks, instead of one
// `tsc` process each. Each check is what `tsc -p PROJECT --incremental --tsBuildInfoFile FILE ARGS`
// does (the same options, the same build info read and written, the same diagnostics in tsc's words,
// unpretty as in a pipe), through the public API the tsc command is made of (createIncrementalProgram,
// then the diagnostics its emitFilesAndReportErrors gathers, in that order).
//
// What it saves is the work every tsc process repeats before it checks anything: a new process
// compiles and warms up TypeScript itself, then parses and binds every file of the program, about
// 1,100 of them, of which some 570 are the declarations of node_modules and TypeScript's libraries, the
// same files for every program here (a copy links the package's node_modules). Here they are parsed
// once per run and each later program takes them as they are: a parsed declaration file is reused only
// for the same path, the same text and the same compiler options (paths, output and build info aside,
// which do not change how a file is parsed or bound), as TypeScript's language service shares files
// between projects. The sources themselves, the package's and each copy's, are parsed afresh for every
// program; what tsc re-checks of them is decided as before, by the build info.
//
//   node test/support/tsc-server.ts SOCKET   listens on the Unix socket SOCKET, prints `listening`
//   POST / {"args": [...], "cwd": "..."}     answers {"output": "..."}: what tsc writes (empty: no error)
import { createServer } from 'node:http';
import ts from 'typescript';

/** Options that name files or say what to write, and change nothing in how a declaration file is parsed or bound. */
const NOT_PARSING = new Set([
  'configFilePath',
  'paths',
  'pathsBasePath',
  'tsBuildInfoFile',
  'incremental',
  'noEmit',
  'pretty',
  'project',
]);

/** Declaration files (node_modules', TypeScript's libraries) as parsed, by path and options: the text they were parsed from, and the file. */
const parsed = new Map<string, { text: string; file: ts.SourceFile }>();

function optionsKey(options: ts.CompilerOptions): string {
  return JSON.stringify(Object.entries(options).filter(([name]) => !NOT_PARSING.has(name)));
}

/** The check `tsc ARGS` run in `cwd` makes: its output (what it writes). */
function check(args: string[], cwd: string): { output: string } {
  process.chdir(cwd);
  // tsc names files relative to where it runs; ts.sys keeps the folder this process started in.
  const system: ts.System = { ...ts.sys, getCurrentDirectory: () => cwd };
  const formatHost: ts.FormatDiagnosticsHost = {
    getCurrentDirectory: () => cwd,
    getNewLine: () => system.newLine,
    getCanonicalFileName: system.useCaseSensitiveFileNames ? (name) => name : (name) => name.toLowerCase(),
  };
  // Unpretty, as tsc writes into a pipe: one diagnostic after another, no summary.
  const words = (diagnostics: readonly ts.Diagnostic[]) =>
    diagnostics.map((diagnostic) => ts.formatDiagnostic(diagnostic, formatHost)).join('');
  const commandLine = ts.parseCommandLine(args);
  if (commandLine.errors.length > 0) return { output: words(commandLine.errors) };
  const project = commandLine.options.project;
  if (!project) return { output: 'tsc-server: no project (-p) given' };
  let unrecoverable: ts.Diagnostic | undefined;
  const config = ts.getParsedCommandLineOfConfigFile(project, commandLine.options, {
    ...system,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      unrecoverable = diagnostic;
    },
  });
  if (!config) return { output: unrecoverable ? words([unrecoverable]) : 'tsc-server: no project read' };
  const { options } = config;
  const host = ts.createIncrementalCompilerHost(options, system);
  host.jsDocParsingMode = ts.JSDocParsingMode.ParseForTypeErrors; // as the tsc command sets it
  const fresh = host.getSourceFile;
  const key = optionsKey(options);
  host.getSourceFile = (fileName, languageVersion, onError, shouldCreateNewSourceFile) => {
    const shared = fileName.endsWith('.d.ts') && fileName.includes('/node_modules/');
    if (!shared) return fresh.call(host, fileName, languageVersion, onError, shouldCreateNewSourceFile);
    const text = host.readFile(fileName);
    const id = `${fileName}\n${key}\n${JSON.stringify(languageVersion)}`;
    const known = parsed.get(id);
    if (known && text !== undefined && known.text === text && !shouldCreateNewSourceFile) return known.file;
    const file = fresh.call(host, fileName, languageVersion, onError, shouldCreateNewSourceFile);
    if (file && text !== undefined) parsed.set(id, { text, file });
    return file;
  };
  const program = ts.createIncrementalProgram({
    rootNames: config.fileNames,
    options,
    configFileParsingDiagnostics: ts.getConfigFileParsingDiagnostics(config),
    ...(config.projectReferences ? { projectReferences: config.projectReferences } : {}),
    host,
  });
  // What tsc's emitFilesAndReportErrors gathers, in its order: each kind only when the one before found nothing.
  const found = [...program.getConfigFileParsingDiagnostics()];
  const before = found.length;
  found.push(...program.getSyntacticDiagnostics());
  if (found.length === before) {
    found.push(...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics());
    if (found.length === before) found.push(...program.getSemanticDiagnostics());
    if (options.noEmit && (options.declaration || options.composite) && found.length === before)
      found.push(...program.getDeclarationDiagnostics());
  }
  // With noEmit, this writes the build info alone.
  const emitted = program.emit();
  found.push(...emitted.diagnostics);
  return { output: words(ts.sortAndDeduplicateDiagnostics(found)) };
}

const socket = process.argv[2];
if (!socket) throw new Error('usage: node test/support/tsc-server.ts SOCKET');
const server = createServer((request, response) => {
  const parts: Buffer[] = [];
  request.on('data', (part: Buffer) => parts.push(part));
  request.on('end', () => {
    let answer: { output: string };
    try {
      const { args, cwd } = JSON.parse(Buffer.concat(parts).toString('utf8')) as { args: string[]; cwd: string };
      answer = check(args, cwd);
    } catch (error) {
      answer = { output: `tsc-server: ${(error as Error).stack ?? error}` };
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
  });
});
// Checks are made one at a time, each holding this process for seconds: a request waiting its turn is not late.
server.requestTimeout = 0;
server.headersTimeout = 0;
server.listen(socket, () => console.log('listening'));
