// The sandbox's refusals: each business rule the sandbox enforces, and each refusal of its control
// API, is an entry of the refusal catalogue (spec/refusals.yaml: sandboxRefusals, controlRefusals)
// with its code and its words, made callable (the business rules by the stubs, which a server team
// imports too; the control API's here), so that a handler names the entry and passes only what varies. Which shape the answer takes (responseCode a string on the body APIs, an integer on
// the NPP and payout paths) is the stubs' `refusalFields`.
import { refusalCatalogue, type RefusalArgs } from '../generated/refusal-catalogue.ts';
import { catalogueOf } from '../runtime/refusal-catalogue.ts';
import { refusalFields, type ErrorCode, type Refusal } from '../server-stubs/index.ts';

// The business rules' catalogue is the stubs' (a server team makes the same answers with it).
export { numberedRefusalEntries, sandboxRefusals } from '../server-stubs/index.ts';

/** The control API's refusals (/_sandbox/…, its own OpenAPI document; responseCode an integer). */
export const controlRefusals = catalogueOf<RefusalArgs['controlRefusals'], ErrorCode>(refusalCatalogue.controlRefusals);

/** A refusal of the body APIs: responseCode as a string, as the gateway sends it in JSON. */
export const refused = (r: Refusal) => refusalFields('string', r);
/** A refusal of the NPP and payout paths (and the control API): responseCode as an integer. */
export const refusedInteger = (r: Refusal) => refusalFields('integer', r);
/** The shape an operation's refusal schema names, for code that serves any operation (the stubs' choice). */
export const refusedAs = refusalFields;
