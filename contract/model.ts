// Model-based stateful checks: random sequences of operations over the card ledger (authorise,
// purchase, capture, refund, void, query) and the vault (add, token purchase with and without a key,
// info, remove), each answer held to a small model of what the gateway must have done. fast-check
// shrinks a failing sequence to the shortest one and reports it with the seed that replays it
// (`--seed`). Every exchange is judged by the watched client too (shapes, echoes, hashes).
import fc from 'fast-check';
import { isApproved, type GatewayClient } from '../generated/client.ts';
import { DetailedFailure, type Check, type RunContext } from './checks.ts';
import { code, customer, expect, notApproved, show, visa } from './stateful.ts';
import { record, recording, type Sent } from './recording.ts';

interface Txn {
  id: string;
  kind: 'auth' | 'purchase';
  amount: number;
  captured: number;
  refunded: number;
  voided: boolean;
}
interface Card {
  id: string;
  key: string;
}
interface Model {
  txns: Txn[];
  cards: Card[];
  keys: number;
}
type Real = GatewayClient;

/** Every operation the sequences send, in the order the notes and a replay's --skip name them. */
export const MODEL_OPERATIONS = [
  'processAuth',
  'processCard',
  'processCapture',
  'refundCard',
  'processVoid',
  'queryCard',
  'addCard',
  'tokenProcessCard',
  'cardInfo',
  'removeCard',
] as const;
type ModelOperation = (typeof MODEL_OPERATIONS)[number];

/** What the steps work on: whether the model holds one, and the operations that make it, the one a run brings in first. */
const STATE = {
  authorisation: {
    words: 'the authorisations',
    makers: ['processAuth'],
    held: (m: Readonly<Model>) => m.txns.some((t) => t.kind === 'auth'),
  },
  transaction: {
    words: 'the transactions',
    makers: ['processAuth', 'processCard'],
    held: (m: Readonly<Model>) => m.txns.length > 0,
  },
  card: { words: 'the stored cards', makers: ['addCard'], held: (m: Readonly<Model>) => m.cards.length > 0 },
} as const satisfies Record<string, { words: string; makers: readonly ModelOperation[]; held: unknown }>;

/**
 * Each operation's step: what it works on (its precondition in the sequences, and the state a run that
 * selects it makes with the operations that make that), and another operation it sends. Written once:
 * the commands' `check` and the run's choice of steps (modelSteps) both read it.
 */
const STEPS: Record<ModelOperation, { on?: keyof typeof STATE; also?: ModelOperation }> = {
  processAuth: {},
  processCard: {},
  processCapture: { on: 'authorisation' },
  refundCard: { on: 'transaction' },
  processVoid: { on: 'transaction' },
  queryCard: { on: 'transaction' },
  addCard: {},
  tokenProcessCard: { on: 'card' },
  cardInfo: { on: 'card' },
  // A removed card is then asked for with cardInfo.
  removeCard: { on: 'card', also: 'cardInfo' },
};

/** A step's precondition: the model holds what its operation works on. */
const ready = (op: ModelOperation) => (m: Readonly<Model>) => {
  const on = STEPS[op].on;
  return on === undefined || STATE[on].held(m);
};

/**
 * The operations whose steps the sequences are made of, in MODEL_OPERATIONS' order, each with why
 * where the run does not select it: those the run's --only/--skip select (`selects`; every one when
 * undefined), and what their steps need whatever --only/--skip say, as a scenario makes the state it
 * needs: where none of the operations that make what a step works on is there, the first of them
 * (processAuth for the authorisations a capture works on, addCard for the cards of a token purchase),
 * and the operation a step sends besides its own (cardInfo for removeCard).
 */
export function modelSteps(selects?: (operationId: string) => boolean): Map<ModelOperation, string | undefined> {
  const steps = new Map<ModelOperation, string | undefined>(
    MODEL_OPERATIONS.filter((op) => selects?.(op) ?? true).map((op) => [op, undefined]),
  );
  // A Map's iteration visits what is added while it runs: the needs of what is brought in too.
  for (const op of steps.keys()) {
    const { on, also } = STEPS[op];
    if (also && !steps.has(also)) steps.set(also, `which ${op} sends too`);
    if (on && !STATE[on].makers.some((maker) => steps.has(maker)))
      steps.set(STATE[on].makers[0], `to make ${STATE[on].words} ${op} works on`);
  }
  return new Map(MODEL_OPERATIONS.filter((op) => steps.has(op)).map((op) => [op, steps.get(op)]));
}

const money = (cents: number) => (cents / 100).toFixed(2);
const pick = <T>(list: T[], n: number) => list[n % list.length]!;

/** A command on the model's n-th transaction or card (n modulo how many there are). */
abstract class Picking {
  readonly n: number;
  constructor(n: number) {
    this.n = n;
  }
}

class Pay implements fc.AsyncCommand<Model, Real> {
  readonly kind: 'auth' | 'purchase';
  readonly cents: number;
  constructor(kind: 'auth' | 'purchase', cents: number) {
    this.kind = kind;
    this.cents = cents;
  }
  check = () => true;
  async run(m: Model, g: Real) {
    const body = {
      transactionAmount: money(this.cents),
      transactionCurrency: 'AUD',
      transactionProduct: 'Model',
      ...customer,
      ...visa,
    } as never;
    const r = this.kind === 'auth' ? await g.processAuth(body) : await g.processCard(body);
    expect(isApproved(r), notApproved(this.toString(), r));
    m.txns.push({
      id: (r as unknown as { transactionID: string }).transactionID,
      kind: this.kind,
      amount: this.cents,
      captured: this.kind === 'purchase' ? this.cents : 0,
      refunded: 0,
      voided: false,
    });
  }
  toString = () => `${this.kind} ${money(this.cents)}`;
}

class Capture implements fc.AsyncCommand<Model, Real> {
  readonly n: number;
  readonly cents: number;
  constructor(n: number, cents: number) {
    this.n = n;
    this.cents = cents;
  }
  check = ready('processCapture');
  async run(m: Model, g: Real) {
    const t = pick(
      m.txns.filter((x) => x.kind === 'auth'),
      this.n,
    );
    const r = await g.processCapture({
      transactionID: t.id,
      transactionAmount: money(t.amount),
      transactionCurrency: 'AUD',
      captureAmount: money(this.cents),
    });
    if (t.voided || t.captured + this.cents > t.amount)
      return expect(
        code(r) < 0,
        `capture ${money(this.cents)} of ${money(t.amount)} (captured ${money(t.captured)}${t.voided ? ', voided' : ''}) was not refused: ${show(r)}`,
      );
    expect(
      isApproved(r),
      `capture ${money(this.cents)} of ${money(t.amount)} (captured ${money(t.captured)}): ${show(r)}`,
    );
    t.captured += this.cents;
  }
  toString = () => `capture #${this.n} ${money(this.cents)}`;
}

class Refund implements fc.AsyncCommand<Model, Real> {
  readonly n: number;
  readonly cents: number;
  constructor(n: number, cents: number) {
    this.n = n;
    this.cents = cents;
  }
  check = ready('refundCard');
  async run(m: Model, g: Real) {
    const t = pick(m.txns, this.n);
    const r = await g.refundCard({
      transactionID: t.id,
      transactionAmount: money(this.cents),
      transactionCurrency: 'AUD',
      refundAmount: money(this.cents),
    });
    if (t.voided || t.refunded + this.cents > t.captured)
      return expect(
        code(r) !== 0,
        `refund ${money(this.cents)} of ${t.kind} captured ${money(t.captured)}, refunded ${money(t.refunded)}${t.voided ? ', voided' : ''} was approved: ${show(r)}`,
      );
    expect(
      isApproved(r),
      `refund ${money(this.cents)} of captured ${money(t.captured)}, refunded ${money(t.refunded)}: ${show(r)}`,
    );
    t.refunded += this.cents;
  }
  toString = () => `refund #${this.n} ${money(this.cents)}`;
}

class Void extends Picking implements fc.AsyncCommand<Model, Real> {
  check = ready('processVoid');
  async run(m: Model, g: Real) {
    const t = pick(m.txns, this.n);
    const r = await g.processVoid({ transactionID: t.id });
    const voidable = !t.voided && (t.kind === 'auth' ? t.captured === 0 : t.refunded === 0);
    if (!voidable)
      return expect(
        code(r) < 0,
        `void of a ${t.kind} (captured ${money(t.captured)}, refunded ${money(t.refunded)}${t.voided ? ', voided' : ''}) was not refused: ${show(r)}`,
      );
    expect(isApproved(r), notApproved(`void of a ${t.kind}`, r));
    t.voided = true;
  }
  override toString = () => `void #${this.n}`;
}

class Query extends Picking implements fc.AsyncCommand<Model, Real> {
  check = ready('queryCard');
  async run(m: Model, g: Real) {
    const t = pick(m.txns, this.n);
    const r = await g.queryCard({ transactionID: t.id });
    expect(isApproved(r), `queryCard: ${show(r)}`);
    const seen = [r.transactionAmount, r.capturedAmount, r.refundedAmount].join(' / ');
    const expected = [money(t.amount), money(t.captured), money(t.refunded)].join(' / ');
    expect(
      seen === expected,
      `queryCard of a ${t.kind} says amount / captured / refunded ${seen}, the run made ${expected}`,
    );
  }
  override toString = () => `query #${this.n}`;
}

class AddCard implements fc.AsyncCommand<Model, Real> {
  check = () => true;
  async run(m: Model, g: Real) {
    const r = await g.token.addCard({
      cardName: 'Model Test',
      cardNumber: visa.paymentCardNumber,
      cardExpiryMonth: '02',
      cardExpiryYear: '29',
    });
    expect(isApproved(r), `addCard: ${show(r)}`);
    m.cards.push({ id: r.cardID, key: r.cardKey });
  }
  toString = () => 'addCard';
}

class TokenPurchase implements fc.AsyncCommand<Model, Real> {
  readonly n: number;
  readonly key: 'right' | 'wrong' | 'none';
  readonly rotate: boolean;
  constructor(n: number, key: 'right' | 'wrong' | 'none', rotate: boolean) {
    this.n = n;
    this.key = key;
    this.rotate = rotate;
  }
  check = ready('tokenProcessCard');
  async run(m: Model, g: Real) {
    const card = pick(m.cards, this.n);
    const replace = `Model${String(++m.keys).padStart(11, '0')}`;
    const keys = {
      ...(this.key === 'right' ? { cardKey: card.key } : this.key === 'wrong' ? { cardKey: 'WrongKey00000000' } : {}),
      ...(this.rotate ? { cardKeyReplace: replace } : {}),
    };
    const r = await g.token.processCard({
      cardID: card.id,
      ...keys,
      transactionAmount: '1.00',
      transactionCurrency: 'AUD',
      transactionProduct: 'Model',
    });
    if (this.key === 'wrong')
      return expect(code(r) < 0, `a token purchase with a wrong key was not refused: ${show(r)}`);
    expect(code(r) >= 0, `${this.toString()}: ${show(r)}`);
    if (this.rotate) card.key = replace;
  }
  toString = () => `token purchase #${this.n} key ${this.key}${this.rotate ? ' rotating' : ''}`;
}

class CardInfo extends Picking implements fc.AsyncCommand<Model, Real> {
  check = ready('cardInfo');
  async run(m: Model, g: Real) {
    const card = pick(m.cards, this.n);
    const r = await g.token.cardInfo({ cardID: card.id, cardKey: card.key });
    expect(isApproved(r) && r.cardNumberLast === '0004', `cardInfo with the card's current key: ${show(r)}`);
  }
  override toString = () => `cardInfo #${this.n}`;
}

class RemoveCard extends Picking implements fc.AsyncCommand<Model, Real> {
  check = ready('removeCard');
  async run(m: Model, g: Real) {
    const card = pick(m.cards, this.n);
    const r = await g.token.removeCard({ cardID: card.id, cardKey: card.key });
    expect(isApproved(r), `removeCard: ${show(r)}`);
    m.cards.splice(m.cards.indexOf(card), 1);
    const gone = await g.token.cardInfo({ cardID: card.id, cardKey: card.key });
    expect(code(gone) < 0, `a removed card still answers cardInfo: ${show(gone)}`);
  }
  override toString = () => `removeCard #${this.n}`;
}

const cents = fc.integer({ min: 100, max: 5_000 });
const index = fc.nat(20);
type Step = fc.Arbitrary<fc.AsyncCommand<Model, Real>>;

/**
 * The steps the sequences are made of: those of `steps` (modelSteps; a run of every operation: all
 * of them, generated as they always were for a seed).
 */
function stepsOf(steps: ReadonlyMap<ModelOperation, unknown>): Step[] {
  const can = (op: ModelOperation) => steps.has(op);
  const kinds = [
    ...(can('processAuth') ? ['auth' as const] : []),
    ...(can('processCard') ? ['purchase' as const] : []),
  ];
  const arbitraries: (Step | false)[] = [
    kinds.length > 0 && fc.tuple(fc.constantFrom(...kinds), cents).map(([k, c]) => new Pay(k, c)),
    can('processCapture') && fc.tuple(index, fc.integer({ min: 1, max: 3_000 })).map(([n, c]) => new Capture(n, c)),
    can('refundCard') && fc.tuple(index, fc.integer({ min: 1, max: 3_000 })).map(([n, c]) => new Refund(n, c)),
    can('processVoid') && index.map((n) => new Void(n)),
    can('queryCard') && index.map((n) => new Query(n)),
    can('addCard') && fc.constant(null).map(() => new AddCard()),
    can('tokenProcessCard') &&
      fc
        .tuple(index, fc.constantFrom('right' as const, 'wrong' as const, 'none' as const), fc.boolean())
        .map(([n, k, r]) => new TokenPurchase(n, k, r)),
    can('cardInfo') && index.map((n) => new CardInfo(n)),
    can('removeCard') && index.map((n) => new RemoveCard(n)),
  ];
  return arbitraries.filter((step): step is Step => step !== false);
}

/**
 * The operations of the sequences a run leaves out: those neither its --only/--skip select
 * (ctx.selects) nor the selected steps need (modelSteps). A replay that skips them makes the same steps.
 */
const leftOut = (ctx: RunContext) => {
  const steps = modelSteps(ctx.selects);
  return MODEL_OPERATIONS.filter((op) => !steps.has(op));
};

/** The model-based check; `client` is the scenarios' watched client, so every answer is judged too. */
export function modelCheck(client: (ctx: RunContext, problems: string[]) => GatewayClient): Check {
  return {
    operationId: 'processCapture',
    // processCapture's tag only: --skip Token leaves the vault out of the sequences (see leftOut),
    // not the card ledger with it.
    tags: ['Direct API'],
    kind: 'scenario',
    name: 'model-based: random sequences over the card ledger and the vault keep to a model of them',
    // Narrowed, the sequences of a seed are others: its replay leaves out what the run left out.
    replaySkip: leftOut,
    run: async (ctx) => {
      if (ctx.mock) return { skip: 'the mock keeps no state: scenarios need a stateful implementation' };
      // The steps of the operations the run selects, and what they need (modelSteps).
      const steps = modelSteps(ctx.selects);
      if (steps.size === 0)
        return {
          skip: `the model-based sequences send ${MODEL_OPERATIONS.join(', ')}, and ${ctx.leftOutBy?.(MODEL_OPERATIONS) ?? '--only/--skip leave out every one of them'} to run them`,
        };
      const without = leftOut(ctx);
      const brought = [...steps].filter(([, why]) => why !== undefined).map(([op, why]) => `${op} (${why})`);
      if (without.length || brought.length)
        ctx.note?.(
          `model-based sequences (processCapture): ${[
            ...(without.length ? [`sent without ${without.join(', ')}, which --only/--skip leave out`] : []),
            ...(brought.length ? [`sent with ${brought.join(', ')}`] : []),
          ].join('; ')}`,
        );
      const commands = stepsOf(steps);
      const problems: string[] = [];
      const g = client(ctx, problems);
      // The steps of the run that failed last (after shrinking, fast-check's counterexample) and the
      // last request it sent: shrinking goes on to sequences that pass, whose requests come later.
      let failed: string[] = [];
      let failedLast: Sent | undefined;
      const details = await fc.check(
        fc.asyncProperty(fc.commands(commands, { maxCommands: 20, size: 'max' }), async (cmds) => {
          const steps: string[] = [];
          // Each sequence judged on its own answers: a problem an earlier one met failed every later
          // sequence too, and fast-check shrank the failure to no step at all.
          problems.length = 0;
          const logged = {
            *[Symbol.iterator]() {
              for (const c of cmds)
                yield {
                  check: (m: Readonly<Model>) => c.check(m),
                  run: async (m: Model, r: Real) => {
                    steps.push(String(c));
                    await c.run(m, r);
                    // The step whose answer broke the contract ends the sequence.
                    if (problems.length) throw new Error(`an answer broke the contract: ${problems.join(' | ')}`);
                  },
                  toString: () => String(c),
                };
            },
          };
          const { error, last } = await recording(() =>
            fc.asyncModelRun(() => ({ model: { txns: [], cards: [], keys: 0 }, real: g }), logged),
          );
          if (error !== undefined) {
            failed = steps;
            failedLast = last;
            throw error;
          }
        }),
        { seed: ctx.seed, numRuns: Math.max(25, ctx.runs * 6), endOnFailure: false },
      );
      if (!details.failed) return;
      // The failure's request as sent (replay.ts prints the check's last one): the failing step's.
      if (failedLast) record(failedLast);
      const error = details.errorInstance;
      // fast-check's own report is many lines with a hint meant for its API: the reason here is the
      // error alone, and the sequence that led to it follows, one step a line.
      throw new DetailedFailure(error instanceof Error ? error.message : String(error), [
        `counterexample, the shortest failing sequence found (seed ${details.seed}, run ${details.numRuns}, shrunk ${details.numShrinks} times):`,
        ...(failed.length ? failed.map((step, i) => `  ${i + 1}. ${step}`) : ['  (no step)']),
      ]);
    },
  };
}
