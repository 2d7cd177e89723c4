/**
 * The merchant administration use cases (spec: Authentication, A preconditions, B1, D Registration;
 * issue 4's admin contract): open an account with its keys, bind terminals, choose methods, register
 * webhooks, revoke keys. The admin API and the CLI call these same functions.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { streamId } from "../kernel/Aggregate.js"
import * as CommandHandler from "../kernel/CommandHandler.js"
import { fold } from "../kernel/Decider.js"
import * as DevWebhooks from "../webhooks/DevWebhooks.js"
import * as EventStore from "../kernel/EventStore.js"
import { IdGenerator, nextId } from "../kernel/IdGenerator.js"
import { MerchantId, TerminalSerial } from "../shared/Ids.js"
import { KeyVault, type IssuedKeyPair } from "./KeyVault.js"
import * as Merchant from "./Merchant.js"
import type { Amount } from "../shared/Money.js"
import type { Integration, KeyMode } from "./SigningKey.js"

// ---------------------------------------------------------------------------------------------
// Key formats
// ---------------------------------------------------------------------------------------------

/**
 * The prefix of a minted key: `id_` (identity key) or `sk_` (secret key), then `live_` or `test_`,
 * then `term_` (terminal API) or `btn_` (payment button). A merchant sees at a glance which key it
 * holds; a key vault appends at least 128 random bits in base 62.
 */
export const keyPrefix = (kind: "identity" | "secret", integration: Integration, mode: KeyMode): string =>
  `${kind === "identity" ? "id" : "sk"}_${mode === "production" ? "live" : "test"}_${
    integration === "terminal_api" ? "term" : "btn"
  }_`

// ---------------------------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------------------------

/** A key pair in clear, shown to the merchant once. */
export interface ClearKeyPair {
  readonly identityKey: string
  readonly secretKey: string
}

/** Both modes of one integration's keys, in clear. */
export interface ClearIntegrationKeys {
  readonly production: ClearKeyPair
  readonly test: ClearKeyPair
}

/** A new merchant and its keys, in clear: the only time the keys are shown. */
export interface CreatedMerchant {
  readonly merchantId: MerchantId
  readonly keys: { readonly [I in Integration]: ClearIntegrationKeys }
}

/** The payment methods of a merchant: every terminal method with its switch, the link methods offered. */
export interface PaymentMethods {
  readonly terminal: { readonly [M in Merchant.TerminalMethod]: boolean }
  readonly link: { readonly [M in Merchant.LinkMethod]?: Merchant.AmountBounds }
}

/** A change of payment methods. A section given replaces that section; a section left out is kept. */
export interface PaymentMethodsChange {
  /** The terminal methods switched on; the others named are off, the ones not named are turned off. */
  readonly terminal?: { readonly [M in Merchant.TerminalMethod]?: boolean | undefined } | undefined
  /** The link methods offered with their bounds; a method not named stops being offered. */
  readonly link?:
    | { readonly [M in Merchant.LinkMethod]?: { readonly min: Amount; readonly max: Amount } | undefined }
    | undefined
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/** The typed errors of the admin use cases (the Merchant aggregate's). */
export type Error = Merchant.Error

// ---------------------------------------------------------------------------------------------
// Running commands
// ---------------------------------------------------------------------------------------------

const handleOne = CommandHandler.make(Merchant.Merchant)

/** Conflicts that outlast the handler's retries are contention the caller cannot fix: a defect. */
const handle = (merchantId: string, command: Merchant.Command, metadata: EventStore.EventMetadata) =>
  handleOne(merchantId, command, metadata).pipe(Effect.catchTag("ConcurrencyConflict", Effect.die))
const load = CommandHandler.load(Merchant.Merchant)
const encodeEvent = Schema.encodeSync(Merchant.Event)

/**
 * Decides several commands one after the other on the same state and appends all their events in
 * one append: either every command is recorded or none. After a concurrency conflict the commands
 * are decided again on the fresh state.
 */
const handleAll = Effect.fn("MerchantAdmin.handleAll")(function* (
  merchantId: string,
  commands: ReadonlyArray<Merchant.Command>,
  metadata: EventStore.EventMetadata = {}
) {
  const store = yield* EventStore.EventStore
  const ids = yield* IdGenerator
  const attempt = Effect.gen(function* () {
    const { state: initial, version } = yield* load(merchantId)
    let state = initial
    const events: Array<Merchant.Event> = []
    for (const command of commands) {
      const decided = yield* Either.match(Merchant.decide(command, state), {
        onLeft: (error) => Effect.fail(error),
        onRight: (events) => Effect.succeed(events)
      })
      state = fold(Merchant.Merchant, decided, state)
      events.push(...decided)
    }
    if (events.length === 0) return state
    const toAppend = yield* Effect.forEach(events, (event) =>
      Effect.map(ids.uuid, (eventId) => ({
        eventId,
        type: event._tag,
        schemaVersion: Merchant.Merchant.schemaVersion,
        data: encodeEvent(event),
        metadata
      }))
    )
    const expected =
      version === 0 ? EventStore.ExpectedVersion.NoStream() : EventStore.ExpectedVersion.Exact({ version })
    yield* store
      .append(streamId(Merchant.Merchant, merchantId), toAppend, expected)
      .pipe(Effect.catchTag("EventIdReused", Effect.die))
    return state
  })
  return yield* attempt.pipe(
    Effect.retry({
      while: (error) => Predicate.isTagged(error, "ConcurrencyConflict"),
      schedule: Schedule.recurs(CommandHandler.MAX_RETRIES)
    }),
    Effect.catchTag("ConcurrencyConflict", Effect.die)
  )
})

const existing = (state: Merchant.State): Effect.Effect<Merchant.Existing, Merchant.MerchantNotFound> =>
  state._tag === "Initial" ? Effect.fail(new Merchant.MerchantNotFound()) : Effect.succeed(state)

const clear = (issued: IssuedKeyPair): ClearKeyPair => ({
  identityKey: issued.identityKey,
  secretKey: issued.secretKey
})

// ---------------------------------------------------------------------------------------------
// Use cases
// ---------------------------------------------------------------------------------------------

/**
 * Opens a merchant account and activates both integrations (terminal API and payment button) with
 * production and test key pairs minted by the `KeyVault`, in one append. The clear keys are
 * returned once; the log keeps only hashes and sealed secrets (M2).
 *
 * @category commands
 */
export const createMerchant = Effect.fn("MerchantAdmin.createMerchant")(function* (
  name: string,
  metadata: EventStore.EventMetadata = {}
) {
  const vault = yield* KeyVault
  const now = yield* DateTime.now
  const merchantId = MerchantId.make(yield* nextId("MER_"))
  const issue = (integration: Integration) =>
    Effect.all({ production: vault.issue(integration, "production"), test: vault.issue(integration, "test") })
  const terminal = yield* issue("terminal_api")
  const button = yield* issue("payment_button")
  const activate = (integration: Integration, keys: { production: IssuedKeyPair; test: IssuedKeyPair }) =>
    new Merchant.ActivateIntegration({
      integration,
      production: keys.production.keyPair,
      test: keys.test.keyPair,
      now
    })
  yield* handleAll(
    merchantId,
    [
      new Merchant.CreateMerchant({ merchantId, name, now }),
      activate("terminal_api", terminal),
      activate("payment_button", button)
    ],
    metadata
  )
  return {
    merchantId,
    keys: {
      terminal_api: { production: clear(terminal.production), test: clear(terminal.test) },
      payment_button: { production: clear(button.production), test: clear(button.test) }
    }
  } satisfies CreatedMerchant
})

/**
 * The merchant's current state, or `MerchantNotFound`.
 *
 * @category queries
 */
export const getMerchant = Effect.fn("MerchantAdmin.getMerchant")(function* (merchantId: string) {
  const { state } = yield* load(merchantId)
  return yield* existing(state)
})

/**
 * Binds a terminal to the merchant (M5, M6): a Smart or Smart Pro, not yet selected for the API.
 * Binding the same terminal again is a no-op that returns it.
 *
 * @category commands
 */
export const bindTerminal = Effect.fn("MerchantAdmin.bindTerminal")(function* (
  merchantId: string,
  terminal: { readonly model: string; readonly serial: TerminalSerial; readonly name: string },
  metadata: EventStore.EventMetadata = {}
) {
  const now = yield* DateTime.now
  const { state } = yield* handle(
    merchantId,
    new Merchant.BindTerminal({ serial: terminal.serial, model: terminal.model, name: terminal.name, now }),
    metadata
  )
  return Option.getOrThrow(Merchant.terminalFor(state, terminal.serial))
})

/**
 * Selects a bound terminal for the API, or deselects it ("API connections", M6).
 *
 * @category commands
 */
export const setTerminalApiEnabled = Effect.fn("MerchantAdmin.setTerminalApiEnabled")(function* (
  merchantId: string,
  serial: TerminalSerial,
  enabled: boolean,
  metadata: EventStore.EventMetadata = {}
) {
  const now = yield* DateTime.now
  const command = enabled
    ? new Merchant.EnableTerminalForApi({ serial, now })
    : new Merchant.DisableTerminalForApi({ serial, now })
  const { state } = yield* handle(merchantId, command, metadata)
  return Option.getOrThrow(Merchant.terminalFor(state, serial))
})

/** The merchant's payment methods as the admin API shows them. */
export const paymentMethodsOf = (state: Merchant.Existing): PaymentMethods => ({
  terminal: state.terminalMethods,
  link: state.linkMethods
})

/**
 * Sets the terminal methods and the link methods with their bounds (M7, M8), all in one append:
 * when one bound is refused nothing changes. Each section given replaces that section.
 *
 * @category commands
 */
export const setPaymentMethods = Effect.fn("MerchantAdmin.setPaymentMethods")(function* (
  merchantId: string,
  change: PaymentMethodsChange,
  metadata: EventStore.EventMetadata = {}
) {
  const now = yield* DateTime.now
  const commands: Array<Merchant.Command> = []
  if (change.terminal !== undefined) {
    for (const method of Merchant.TERMINAL_METHODS) {
      commands.push(
        new Merchant.SetTerminalMethod({ method, enabled: change.terminal[method] === true, now })
      )
    }
  }
  if (change.link !== undefined) {
    for (const method of Merchant.LinkMethod.literals) {
      const bounds = change.link[method]
      commands.push(
        bounds === undefined
          ? new Merchant.RemoveLinkMethod({ method, now })
          : new Merchant.SetLinkMethod({ method, min: bounds.min, max: bounds.max, now })
      )
    }
  }
  const state = yield* handleAll(merchantId, commands, metadata)
  return paymentMethodsOf(yield* existing(state))
})

/**
 * Registers the production webhook or the test webhook, replacing the one registered (M9). The
 * production URL must be https://, except under `DevWebhooks` (`COBRO_DEV_WEBHOOKS=1`). The test
 * webhook may be http:// unless `allowInsecure` is false.
 *
 * @category commands
 */
export const setWebhook = Effect.fn("MerchantAdmin.setWebhook")(function* (
  merchantId: string,
  mode: KeyMode,
  url: string,
  options: {
    readonly allowInsecure?: boolean
    readonly metadata?: EventStore.EventMetadata
    /** The endpoint also gets the Standard Webhooks headers (W19); default off. */
    readonly standardWebhooks?: boolean
  } = {}
) {
  if (options.allowInsecure === false && !url.startsWith("https://")) {
    return yield* new Merchant.InvalidWebhookUrl({ merchantId: MerchantId.make(merchantId), mode, url })
  }
  const now = yield* DateTime.now
  const standardWebhooks = options.standardWebhooks === true
  const development = (yield* DevWebhooks.DevWebhooks).enabled
  yield* handle(
    merchantId,
    new Merchant.SetWebhook({ mode, url, standardWebhooks, ...(development ? { development } : {}), now }),
    options.metadata ?? {}
  )
  return { mode, url, standardWebhooks }
})

/**
 * Deletes the webhook of one mode: delivery to it stops. Deleting an absent webhook changes nothing.
 *
 * @category commands
 */
export const deleteWebhook = Effect.fn("MerchantAdmin.deleteWebhook")(function* (
  merchantId: string,
  mode: KeyMode,
  metadata: EventStore.EventMetadata = {}
) {
  const now = yield* DateTime.now
  yield* handle(merchantId, new Merchant.DeleteWebhook({ mode, now }), metadata)
})

/**
 * Revokes one key (M4): a new pair replaces the (integration, mode) pair at once; the old identity
 * key stops authenticating as soon as the rotation is recorded. Returns the new pair in clear.
 *
 * @category commands
 */
export const rotateKey = Effect.fn("MerchantAdmin.rotateKey")(function* (
  merchantId: string,
  integration: Integration,
  mode: KeyMode,
  metadata: EventStore.EventMetadata = {}
) {
  const vault = yield* KeyVault
  const now = yield* DateTime.now
  const issued = yield* vault.issue(integration, mode)
  yield* handle(
    merchantId,
    new Merchant.RotateKey({ integration, mode, keyPair: issued.keyPair, now }),
    metadata
  )
  return clear(issued)
})

/** A merchant's account status after a change, as the admin API shows it. */
export interface MerchantStatus {
  readonly merchantId: MerchantId
  readonly status: Merchant.Status
}

/**
 * Enables or disables the merchant's account (M1): a disabled account cannot ask for payments (A3,
 * B2, C1, C4, a link payment) but keeps its configuration and still answers reads and support work
 * (L6a). Setting the status the account has already changes nothing and records nothing.
 *
 * @category commands
 */
export const setStatus = Effect.fn("MerchantAdmin.setStatus")(function* (
  merchantId: string,
  status: Merchant.Status,
  metadata: EventStore.EventMetadata = {}
) {
  const now = yield* DateTime.now
  const command =
    status === "ENABLED" ? new Merchant.EnableMerchant({ now }) : new Merchant.DisableMerchant({ now })
  const { state } = yield* handle(merchantId, command, metadata)
  const merchant = yield* existing(state)
  return { merchantId: merchant.merchantId, status: merchant._tag } satisfies MerchantStatus
})
