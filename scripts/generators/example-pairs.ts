// Request and answer examples paired by name: tools that replay examples (Specmatic) pair a request
// example with the answer example of the same name and ignore either half without its pair. Each
// operation's descriptor already says which examples are its requests and which its answers; the
// pairing is composed from that as the document is read (compose.ts), never written by hand: each
// operation's first request example's name is given, in the success response's example maps, to its
// first answer (a $ref, not a copy); a further request example (another form) stays unpaired. The shared paths get theirs as their lists are composed (method-index.ts);
// this module does it for a path file with operations of its own (an x-operation descriptor).
import YAML, { isMap, type Scalar, YAMLMap } from 'yaml';

const VERBS = ['get', 'put', 'post', 'delete', 'patch'];
const STRINGIFY = { lineWidth: 0, flowCollectionPadding: false } as const;
const pointerKey = (key: string): string => key.replaceAll('~', '~0').replaceAll('/', '~1');

/** The path file's text with its request examples paired, or undefined when it has none to pair. */
export function withPairedExamples(source: string): string | undefined {
  const doc = YAML.parseDocument(source);
  let changed = false;
  for (const verb of VERBS) {
    const descriptor = doc.getIn([verb, 'x-operation', 'examples']);
    if (!isMap(descriptor)) continue;
    const names = (list: string) => (doc.getIn([verb, 'x-operation', 'examples', list]) as any)?.toJSON?.() ?? [];
    const requests: string[] = names('request');
    const answers: string[] = [...names('result'), ...names('refusal')];
    const responses = doc.getIn([verb, 'responses']);
    if (!requests.length || !isMap(responses)) continue;
    for (const pair of responses.items) {
      const code = String((pair.key as Scalar).value);
      const content = isMap(pair.value) ? pair.value.get('content') : undefined;
      if (!code.startsWith('2') || !isMap(content)) continue;
      for (const entry of content.items) {
        const examples = isMap(entry.value) ? entry.value.get('examples') : undefined;
        if (!isMap(examples)) continue;
        const answer = answers.find((name) => examples.has(name));
        if (!answer) continue;
        const media = String((entry.key as Scalar).value);
        // Only the first: Specmatic 2.55 refuses a second request example paired with the same answer.
        for (const name of requests.slice(0, 1).filter((n) => !examples.has(n))) {
          const ref = new YAMLMap();
          ref.flow = true;
          ref.set(
            '$ref',
            `#/${verb}/responses/${pointerKey(code)}/content/${pointerKey(media)}/examples/${pointerKey(answer)}`,
          );
          examples.set(name, ref);
          changed = true;
        }
      }
    }
  }
  return changed ? doc.toString(STRINGIFY) : undefined;
}
