// An answer narrowed to its result by the client's own isApproved(), in place of a cast: a refusal or
// a decline fails the test at this point, naming the answer it got.
import { isApproved } from '../../generated/client.ts';

export function approved<T extends { responseCode: string | number }>(answer: T) {
  if (!isApproved(answer)) throw new Error(`expected an approval, got ${JSON.stringify(answer)}`);
  return answer;
}
