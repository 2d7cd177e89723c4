/**
 * The merchant account (spec A preconditions, Authentication, B1, D Registration): its key pairs,
 * bound terminals, enabled payment methods and webhook endpoints, and whether it is enabled.
 */
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as Match from "effect/Match"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Aggregate, type Decision, type Initial, none, ok } from "../kernel/Aggregate.js"
import { MerchantId, TerminalSerial } from "../shared/Ids.js"
import { Amount } from "../shared/Money.js"
import { TerminalMethod } from "../shared/Cards.js"
import { IdentityKeyHash, Integration, KeyMode, SealedSecret } from "./SigningKey.js"
import * as Transitions from "../kernel/Transitions.js"

export type { Initial } from "../kernel/Aggregate.js"

// ---------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------

/**
 * An enabled merchant can take payments; a disabled one keeps its configuration.
 * @category models
 */
export const Status = Schema.Literal("ENABLED", "DISABLED")
export type Status = typeof Status.Type

/**
 * The supported terminals (spec A): the Smart model and the Smart Pro model, as `terminal_model` spells them.
 * @category models
 */
export const TerminalModel = Schema.Literal("SMART", "SMART_PRO")
export type TerminalModel = typeof TerminalModel.Type

/**
 * Terminal checkout methods (A), each of which the merchant enables or not: one list with the
 * checkout's, declared in `Cards`.
 * @category models
 */
export { TerminalMethod }

/**
 * Every terminal method, in the order A1 lists them.
 * @category models
 */
export const TERMINAL_METHODS: ReadonlyArray<TerminalMethod> = TerminalMethod.literals

/**
 * Payment link methods (B1), the keys the spec shows.
 * @category models
 */
export const LinkMethod = Schema.Literal("CREDIT_CARD", "PSE", "BOTON_BANK", "WALLET_A")
export type LinkMethod = typeof LinkMethod.Type

/**
 * A link method's amount bounds (B1): `min ≤ max`, both non-negative.
 * @category models
 */
export const AmountBounds = Schema.Struct({ min: Amount, max: Amount })
export type AmountBounds = typeof AmountBounds.Type

/**
 * One key pair: the identity key, kept only as its SHA-256, and the sealed secret key.
 * @category models
 */
export const KeyPair = Schema.Struct({ identityKeyHash: IdentityKeyHash, secretKey: SealedSecret })
export type KeyPair = typeof KeyPair.Type

const HttpsUrl = /^https:\/\/[^\s/?#@]+(?:[/?#]\S*)?$/
const HttpUrl = /^https?:\/\/[^\s/?#@]+(?:[/?#]\S*)?$/

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

/**
 * An operator opens a merchant account: enabled, with no keys, terminals, link methods or webhooks.
 * @category commands
 */
export class CreateMerchant extends Schema.TaggedClass<CreateMerchant>()("CreateMerchant", {
  merchantId: MerchantId,
  name: Schema.NonEmptyTrimmedString,
  now: Schema.DateTimeUtc
}) {}

/**
 * An operator enables the account again: it takes payments.
 * @category commands
 */
export class EnableMerchant extends Schema.TaggedClass<EnableMerchant>()("EnableMerchant", {
  now: Schema.DateTimeUtc
}) {}

/**
 * An operator disables the account: it stops taking payments and keeps its configuration.
 * @category commands
 */
export class DisableMerchant extends Schema.TaggedClass<DisableMerchant>()("DisableMerchant", {
  now: Schema.DateTimeUtc
}) {}

/**
 * "On first use the merchant activates the keys": both modes' key pairs of one integration. The
 * handler minted the keys, hashed the identity keys and sealed the secrets.
 * @category commands
 */
export class ActivateIntegration extends Schema.TaggedClass<ActivateIntegration>()("ActivateIntegration", {
  integration: Integration,
  production: KeyPair,
  test: KeyPair,
  now: Schema.DateTimeUtc
}) {}

/**
 * Support revokes a key: the old pair stops working and this new pair replaces it.
 * @category commands
 */
export class RotateKey extends Schema.TaggedClass<RotateKey>()("RotateKey", {
  integration: Integration,
  mode: KeyMode,
  keyPair: KeyPair,
  now: Schema.DateTimeUtc
}) {}

/**
 * Binds a terminal. `model` is checked by the decider so that an unsupported one is a typed error.
 * @category commands
 */
export class BindTerminal extends Schema.TaggedClass<BindTerminal>()("BindTerminal", {
  serial: TerminalSerial,
  model: Schema.String,
  name: Schema.NonEmptyTrimmedString,
  now: Schema.DateTimeUtc
}) {}

/**
 * Unbinds a terminal: it no longer takes the merchant's checkouts.
 * @category commands
 */
export class UnbindTerminal extends Schema.TaggedClass<UnbindTerminal>()("UnbindTerminal", {
  serial: TerminalSerial,
  now: Schema.DateTimeUtc
}) {}

/**
 * Selects a bound terminal for the API (collection preferences, API connections).
 * @category commands
 */
export class EnableTerminalForApi extends Schema.TaggedClass<EnableTerminalForApi>()("EnableTerminalForApi", {
  serial: TerminalSerial,
  now: Schema.DateTimeUtc
}) {}

/**
 * Deselects a bound terminal for the API: "a terminal that is not selected does not work".
 * @category commands
 */
export class DisableTerminalForApi extends Schema.TaggedClass<DisableTerminalForApi>()(
  "DisableTerminalForApi",
  {
    serial: TerminalSerial,
    now: Schema.DateTimeUtc
  }
) {}

/**
 * Turns one terminal checkout method on or off (A1's `enabled`).
 * @category commands
 */
export class SetTerminalMethod extends Schema.TaggedClass<SetTerminalMethod>()("SetTerminalMethod", {
  method: TerminalMethod,
  enabled: Schema.Boolean,
  now: Schema.DateTimeUtc
}) {}

/**
 * Offers a link method with its bounds, or changes them.
 * @category commands
 */
export class SetLinkMethod extends Schema.TaggedClass<SetLinkMethod>()("SetLinkMethod", {
  method: LinkMethod,
  min: Amount,
  max: Amount,
  now: Schema.DateTimeUtc
}) {}

/**
 * Stops offering a link method.
 * @category commands
 */
export class RemoveLinkMethod extends Schema.TaggedClass<RemoveLinkMethod>()("RemoveLinkMethod", {
  method: LinkMethod,
  now: Schema.DateTimeUtc
}) {}

/**
 * Registers the production webhook or the (single) test webhook; replaces the one registered.
 * `standardWebhooks`: the endpoint also gets the Standard Webhooks headers (W19); default off.
 * @category commands
 */
export class SetWebhook extends Schema.TaggedClass<SetWebhook>()("SetWebhook", {
  mode: KeyMode,
  url: Schema.String,
  standardWebhooks: Schema.optional(Schema.Boolean),
  /** Registered under the development rules (`COBRO_DEV_WEBHOOKS=1`): http:// for production too. */
  development: Schema.optional(Schema.Boolean),
  now: Schema.DateTimeUtc
}) {}

/**
 * Deletes a webhook: delivery to it stops.
 * @category commands
 */
export class DeleteWebhook extends Schema.TaggedClass<DeleteWebhook>()("DeleteWebhook", {
  mode: KeyMode,
  now: Schema.DateTimeUtc
}) {}

/**
 * Every command of the merchant account.
 * @category commands
 */
export const Command = Schema.Union(
  CreateMerchant,
  EnableMerchant,
  DisableMerchant,
  ActivateIntegration,
  RotateKey,
  BindTerminal,
  UnbindTerminal,
  EnableTerminalForApi,
  DisableTerminalForApi,
  SetTerminalMethod,
  SetLinkMethod,
  RemoveLinkMethod,
  SetWebhook,
  DeleteWebhook
)
export type Command = typeof Command.Type

// ---------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------

/**
 * An account was opened: ENABLED, with no keys, terminals, link methods or webhooks.
 * @category events
 */
export class MerchantCreated extends Schema.TaggedClass<MerchantCreated>()("MerchantCreated", {
  merchantId: MerchantId,
  name: Schema.NonEmptyTrimmedString,
  createdAt: Schema.DateTimeUtc
}) {}

/**
 * The account was enabled: ENABLED, it takes payments.
 * @category events
 */
export class MerchantEnabled extends Schema.TaggedClass<MerchantEnabled>()("MerchantEnabled", {
  at: Schema.DateTimeUtc
}) {}

/**
 * The account was disabled: DISABLED, no payments, configuration kept.
 * @category events
 */
export class MerchantDisabled extends Schema.TaggedClass<MerchantDisabled>()("MerchantDisabled", {
  at: Schema.DateTimeUtc
}) {}

/**
 * An integration's keys were activated on first use: a key pair per mode (production, test).
 * @category events
 */
export class IntegrationActivated extends Schema.TaggedClass<IntegrationActivated>()("IntegrationActivated", {
  integration: Integration,
  production: KeyPair,
  test: KeyPair,
  at: Schema.DateTimeUtc
}) {}

/**
 * The revoked hash is carried so that a key-lookup projection can drop it.
 * @category events
 */
export class KeyRotated extends Schema.TaggedClass<KeyRotated>()("KeyRotated", {
  integration: Integration,
  mode: KeyMode,
  revokedIdentityKeyHash: IdentityKeyHash,
  keyPair: KeyPair,
  at: Schema.DateTimeUtc
}) {}

/**
 * A Smart or Smart Pro terminal was bound to the account (not yet selected for the API).
 * @category events
 */
export class TerminalBound extends Schema.TaggedClass<TerminalBound>()("TerminalBound", {
  serial: TerminalSerial,
  model: TerminalModel,
  name: Schema.NonEmptyTrimmedString,
  at: Schema.DateTimeUtc
}) {}

/**
 * A terminal was unbound from the account.
 * @category events
 */
export class TerminalUnbound extends Schema.TaggedClass<TerminalUnbound>()("TerminalUnbound", {
  serial: TerminalSerial,
  at: Schema.DateTimeUtc
}) {}

/**
 * A bound terminal was selected for the API: checkouts may use it.
 * @category events
 */
export class TerminalApiEnabled extends Schema.TaggedClass<TerminalApiEnabled>()("TerminalApiEnabled", {
  serial: TerminalSerial,
  at: Schema.DateTimeUtc
}) {}

/**
 * A bound terminal was deselected for the API: checkouts may not use it.
 * @category events
 */
export class TerminalApiDisabled extends Schema.TaggedClass<TerminalApiDisabled>()("TerminalApiDisabled", {
  serial: TerminalSerial,
  at: Schema.DateTimeUtc
}) {}

/**
 * A terminal checkout method was turned on or off (A1's `enabled`).
 * @category events
 */
export class TerminalMethodSet extends Schema.TaggedClass<TerminalMethodSet>()("TerminalMethodSet", {
  method: TerminalMethod,
  enabled: Schema.Boolean,
  at: Schema.DateTimeUtc
}) {}

/**
 * A payment link method is offered, with its amount bounds (B1).
 * @category events
 */
export class LinkMethodSet extends Schema.TaggedClass<LinkMethodSet>()("LinkMethodSet", {
  method: LinkMethod,
  min: Amount,
  max: Amount,
  at: Schema.DateTimeUtc
}) {}

/**
 * A payment link method is no longer offered.
 * @category events
 */
export class LinkMethodRemoved extends Schema.TaggedClass<LinkMethodRemoved>()("LinkMethodRemoved", {
  method: LinkMethod,
  at: Schema.DateTimeUtc
}) {}

/**
 * A webhook registered. `standardWebhooks` is written only when on: older events read as off.
 * @category events
 */
export class WebhookSet extends Schema.TaggedClass<WebhookSet>()("WebhookSet", {
  mode: KeyMode,
  url: Schema.String,
  standardWebhooks: Schema.optional(Schema.Literal(true)),
  at: Schema.DateTimeUtc
}) {}

/**
 * A webhook was deleted: notifications of its mode are no longer delivered to it.
 * @category events
 */
export class WebhookDeleted extends Schema.TaggedClass<WebhookDeleted>()("WebhookDeleted", {
  mode: KeyMode,
  at: Schema.DateTimeUtc
}) {}

/**
 * Every event of the merchant account, as stored.
 * @category events
 */
export const Event = Schema.Union(
  MerchantCreated,
  MerchantEnabled,
  MerchantDisabled,
  IntegrationActivated,
  KeyRotated,
  TerminalBound,
  TerminalUnbound,
  TerminalApiEnabled,
  TerminalApiDisabled,
  TerminalMethodSet,
  LinkMethodSet,
  LinkMethodRemoved,
  WebhookSet,
  WebhookDeleted
)
export type Event = typeof Event.Type

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

const Refusal = Aggregate.refusalErrors({ merchantId: MerchantId }, { status: Status })

/**
 * No merchant with that id.
 * @category errors
 */
export class MerchantNotFound extends Refusal.NotFound<MerchantNotFound>()("MerchantNotFound") {}

/**
 * A merchant with that id exists already.
 * @category errors
 */
export class MerchantAlreadyExists extends Refusal.AlreadyExists<MerchantAlreadyExists>()(
  "MerchantAlreadyExists"
) {}

/**
 * The merchant is not in a state that accepts the command.
 * @category errors
 */
export class MerchantNotInState extends Refusal.NotInState<MerchantNotInState>()("MerchantNotInState") {}

/**
 * The integration's keys are activated already: a new key comes only from a rotation.
 * @category errors
 */
export class IntegrationAlreadyActive extends Schema.TaggedError<IntegrationAlreadyActive>()(
  "IntegrationAlreadyActive",
  { merchantId: MerchantId, integration: Integration }
) {}

/**
 * The integration has no keys yet: activate them before rotating one.
 * @category errors
 */
export class IntegrationNotActive extends Schema.TaggedError<IntegrationNotActive>()("IntegrationNotActive", {
  merchantId: MerchantId,
  integration: Integration
}) {}

/**
 * The new identity key's hash is one the merchant holds already (or both modes got the same key).
 * @category errors
 */
export class IdentityKeyReused extends Schema.TaggedError<IdentityKeyReused>()("IdentityKeyReused", {
  merchantId: MerchantId
}) {}

/**
 * Only the Smart and Smart Pro models are supported.
 * @category errors
 */
export class UnsupportedTerminalModel extends Schema.TaggedError<UnsupportedTerminalModel>()(
  "UnsupportedTerminalModel",
  { merchantId: MerchantId, model: Schema.String }
) {}

/**
 * The serial is bound already, with another model or name.
 * @category errors
 */
export class TerminalAlreadyBound extends Schema.TaggedError<TerminalAlreadyBound>()("TerminalAlreadyBound", {
  merchantId: MerchantId,
  serial: TerminalSerial
}) {}

/**
 * No terminal with that serial is bound to the merchant.
 * @category errors
 */
export class TerminalNotBound extends Schema.TaggedError<TerminalNotBound>()("TerminalNotBound", {
  merchantId: MerchantId,
  serial: TerminalSerial
}) {}

/**
 * A link method's minimum exceeds its maximum.
 * @category errors
 */
export class InvalidMethodBounds extends Schema.TaggedError<InvalidMethodBounds>()("InvalidMethodBounds", {
  merchantId: MerchantId,
  method: LinkMethod,
  min: Amount,
  max: Amount
}) {}

/**
 * A webhook URL that is not an absolute https:// URL (http:// is also accepted for the test webhook,
 * and for both under the development rules, then `development` is true).
 * @category errors
 */
export class InvalidWebhookUrl extends Schema.TaggedError<InvalidWebhookUrl>()("InvalidWebhookUrl", {
  merchantId: MerchantId,
  mode: KeyMode,
  url: Schema.String,
  development: Schema.optional(Schema.Boolean)
}) {}

/**
 * Whether the rules that refused the URL accept http:// too (else only https://).
 * @category errors
 */
export const acceptsHttp = (error: InvalidWebhookUrl): boolean =>
  error.mode === "test" || error.development === true

/**
 * Every refusal of the merchant account.
 * @category errors
 */
export type Error =
  | MerchantNotFound
  | MerchantAlreadyExists
  | MerchantNotInState
  | IntegrationAlreadyActive
  | IntegrationNotActive
  | IdentityKeyReused
  | UnsupportedTerminalModel
  | TerminalAlreadyBound
  | TerminalNotBound
  | InvalidMethodBounds
  | InvalidWebhookUrl

// ---------------------------------------------------------------------------------------------
// State
// ---------------------------------------------------------------------------------------------

/**
 * One integration's keys: a pair per mode.
 * @category models
 */
export interface IntegrationKeys {
  readonly production: KeyPair
  readonly test: KeyPair
  readonly activatedAt: DateTime.Utc
}

/**
 * A bound terminal; `apiEnabled` is whether it is selected for the API.
 * @category models
 */
export interface Terminal {
  readonly serial: TerminalSerial
  readonly model: TerminalModel
  readonly name: string
  readonly apiEnabled: boolean
  readonly boundAt: DateTime.Utc
}

/**
 * An account and its configuration.
 * @category models
 */
export interface Existing {
  readonly _tag: Status
  readonly merchantId: MerchantId
  readonly name: string
  readonly keys: { readonly [I in Integration]: Option.Option<IntegrationKeys> }
  /** In the order they were bound. */
  readonly terminals: ReadonlyArray<Terminal>
  readonly terminalMethods: { readonly [M in TerminalMethod]: boolean }
  /** The methods links offer, with their bounds; a method absent is not offered. */
  readonly linkMethods: { readonly [M in LinkMethod]?: AmountBounds }
  readonly webhooks: { readonly [M in KeyMode]: Option.Option<Webhook> }
  readonly createdAt: DateTime.Utc
  readonly updatedAt: DateTime.Utc
}

/**
 * No merchant yet (`Initial`), or an account.
 * @category models
 */
export type State = Initial | Existing

/**
 * A registered webhook endpoint.
 * @category models
 */
export interface Webhook {
  readonly url: string
  /** Whether attempts to it carry the Standard Webhooks headers too (W19). */
  readonly standardWebhooks: boolean
}

/**
 * A new merchant takes card payments (POS) on its terminals; every other method starts off.
 * @category models
 */
export const DEFAULT_TERMINAL_METHODS: Existing["terminalMethods"] = {
  POS: true,
  WALLET_A: false,
  WALLET_B: false,
  PAY_BY_LINK: false,
  PAY_BY_QR_SERVICE: false
}

// ---------------------------------------------------------------------------------------------
// Queries
// ---------------------------------------------------------------------------------------------

/**
 * The account is enabled: the terminal API's first precondition.
 * @category predicates
 */
export const isEnabled = (state: State): boolean => state._tag === "ENABLED"

/**
 * The terminal bound with that serial, if any.
 * @category getters
 */
export const terminalFor = (state: State, serial: string): Option.Option<Terminal> =>
  state._tag === "Initial"
    ? Option.none()
    : Option.fromNullable(state.terminals.find((t) => t.serial === serial))

/**
 * A checkout may use the terminal: bound with exactly that `terminal_model`, and selected for the API.
 * @category predicates
 */
export const isTerminalUsable = (state: State, serial: string, model: string): boolean =>
  Option.exists(terminalFor(state, serial), (t) => t.model === model && t.apiEnabled)

/**
 * The terminals A2 lists: bound to the account (whether selected for the API or not).
 * @category getters
 */
export const boundTerminals = (state: State): ReadonlyArray<Terminal> =>
  state._tag === "Initial" ? [] : state.terminals

/**
 * A1: every terminal method with whether it is enabled.
 * @category getters
 */
export const terminalMethods = (
  state: State
): ReadonlyArray<{ readonly name: TerminalMethod; readonly enabled: boolean }> =>
  TERMINAL_METHODS.map((name) => ({ name, enabled: state._tag !== "Initial" && state.terminalMethods[name] }))

/**
 * The terminal methods a checkout may use (A3 answers AP003 for the others).
 * @category getters
 */
export const activeTerminalMethods = (state: State): ReadonlyArray<TerminalMethod> =>
  terminalMethods(state)
    .filter((m) => m.enabled)
    .map((m) => m.name)

/**
 * B1: the link methods offered, with their bounds.
 * @category getters
 */
export const linkMethodBounds = (state: State): { readonly [M in LinkMethod]?: AmountBounds } =>
  state._tag === "Initial" ? {} : state.linkMethods

/**
 * Where a notification goes: production → the production webhook; test → the test webhook, or,
 * when none is registered, the webhook registered in the panel (spec D: sandbox terminal-API
 * notifications "go to the webhook registered in the panel").
 * @category getters
 */
export const webhookFor = (state: State, mode: KeyMode): Option.Option<Webhook> =>
  state._tag === "Initial"
    ? Option.none()
    : mode === "production"
      ? state.webhooks.production
      : Option.orElse(state.webhooks.test, () => state.webhooks.production)

/**
 * The URL of {@link webhookFor}.
 * @category getters
 */
export const webhookUrl = (state: State, mode: KeyMode): Option.Option<string> =>
  Option.map(webhookFor(state, mode), (webhook) => webhook.url)

/**
 * Whether the integration's keys are activated (signing rule 3's "when enabled").
 * @category predicates
 */
export const isIntegrationActive = (state: State, integration: Integration): boolean =>
  state._tag !== "Initial" && Option.isSome(state.keys[integration])

/**
 * The current key pair of one integration and mode.
 * @category getters
 */
export const keyPairFor = (state: State, integration: Integration, mode: KeyMode): Option.Option<KeyPair> =>
  state._tag === "Initial" ? Option.none() : Option.map(state.keys[integration], (keys) => keys[mode])

/**
 * Every identity key hash the merchant holds now (a revoked one is no longer among them).
 * @category getters
 */
export const identityKeyHashes = (state: State): ReadonlyArray<IdentityKeyHash> =>
  state._tag === "Initial"
    ? []
    : Integration.literals.flatMap((i) =>
        Option.match(state.keys[i], {
          onNone: () => [],
          onSome: (keys) => [keys.production.identityKeyHash, keys.test.identityKeyHash]
        })
      )

// ---------------------------------------------------------------------------------------------
// Transitions
// ---------------------------------------------------------------------------------------------

// Configuration stays editable while the account is disabled: disabling stops payments, not support.
// A change is recorded and keeps the status; a request that repeats what is configured records
// nothing (binding the same terminal again, setting a method as it is, deleting no webhook).
const configuration = <S extends Status>(s: S) =>
  ({
    ActivateIntegration: s,
    RotateKey: s,
    BindTerminal: [s, "noop"],
    UnbindTerminal: s,
    EnableTerminalForApi: [s, "noop"],
    DisableTerminalForApi: [s, "noop"],
    SetTerminalMethod: [s, "noop"],
    SetLinkMethod: [s, "noop"],
    RemoveLinkMethod: [s, "noop"],
    SetWebhook: [s, "noop"],
    DeleteWebhook: [s, "noop"]
  }) as const

/**
 * State × command → where it leads, or `"noop"`: accepted, nothing recorded. No state is final: a
 * disabled account can be enabled again.
 * @category models
 */
export const transitions = Transitions.make<State["_tag"], Command["_tag"]>({
  Initial: { CreateMerchant: "ENABLED" },
  ENABLED: { ...configuration("ENABLED"), EnableMerchant: "noop", DisableMerchant: "DISABLED" },
  DISABLED: { ...configuration("DISABLED"), EnableMerchant: "ENABLED", DisableMerchant: "noop" }
})

// ---------------------------------------------------------------------------------------------
// Decide
// ---------------------------------------------------------------------------------------------

const create = (command: CreateMerchant): Decision<Event, Error> =>
  ok(new MerchantCreated({ merchantId: command.merchantId, name: command.name, createdAt: command.now }))

/** Decides a command the table lets act on an existing account. */
const decideExisting = (
  command: Exclude<Command, CreateMerchant>,
  state: Existing
): Decision<Event, Error> => {
  const merchantId = state.merchantId
  return Match.valueTags(command, {
    EnableMerchant: (c) => (state._tag === "ENABLED" ? none : ok(new MerchantEnabled({ at: c.now }))),
    DisableMerchant: (c) => (state._tag === "DISABLED" ? none : ok(new MerchantDisabled({ at: c.now }))),
    ActivateIntegration: (c) => activate(c, state),
    RotateKey: (c) => rotate(c, state),
    BindTerminal: (c) => bind(c, state),
    UnbindTerminal: (c) =>
      Option.isNone(terminalFor(state, c.serial))
        ? Either.left(new TerminalNotBound({ merchantId, serial: c.serial }))
        : ok(new TerminalUnbound({ serial: c.serial, at: c.now })),
    EnableTerminalForApi: (c) =>
      Option.match(terminalFor(state, c.serial), {
        onNone: () => Either.left(new TerminalNotBound({ merchantId, serial: c.serial })),
        onSome: (t) => (t.apiEnabled ? none : ok(new TerminalApiEnabled({ serial: c.serial, at: c.now })))
      }),
    DisableTerminalForApi: (c) =>
      Option.match(terminalFor(state, c.serial), {
        onNone: () => Either.left(new TerminalNotBound({ merchantId, serial: c.serial })),
        onSome: (t) => (t.apiEnabled ? ok(new TerminalApiDisabled({ serial: c.serial, at: c.now })) : none)
      }),
    SetTerminalMethod: (c) =>
      state.terminalMethods[c.method] === c.enabled
        ? none
        : ok(new TerminalMethodSet({ method: c.method, enabled: c.enabled, at: c.now })),
    SetLinkMethod: (c) => {
      if (c.min > c.max) {
        return Either.left(new InvalidMethodBounds({ merchantId, method: c.method, min: c.min, max: c.max }))
      }
      const current = state.linkMethods[c.method]
      return current !== undefined && current.min === c.min && current.max === c.max
        ? none
        : ok(new LinkMethodSet({ method: c.method, min: c.min, max: c.max, at: c.now }))
    },
    RemoveLinkMethod: (c) =>
      state.linkMethods[c.method] === undefined
        ? none
        : ok(new LinkMethodRemoved({ method: c.method, at: c.now })),
    SetWebhook: (c) => {
      const development = c.development === true
      if (!(c.mode === "production" && !development ? HttpsUrl : HttpUrl).test(c.url)) {
        return Either.left(
          new InvalidWebhookUrl({
            merchantId,
            mode: c.mode,
            url: c.url,
            ...(development ? { development } : {})
          })
        )
      }
      const standardWebhooks = c.standardWebhooks === true
      return Option.exists(
        state.webhooks[c.mode],
        (w) => w.url === c.url && w.standardWebhooks === standardWebhooks
      )
        ? none
        : ok(
            new WebhookSet({
              mode: c.mode,
              url: c.url,
              ...(standardWebhooks ? { standardWebhooks } : {}),
              at: c.now
            })
          )
    },
    DeleteWebhook: (c) =>
      Option.isNone(state.webhooks[c.mode]) ? none : ok(new WebhookDeleted({ mode: c.mode, at: c.now }))
  })
}

const activate = (c: ActivateIntegration, state: Existing): Decision<Event, Error> => {
  const merchantId = state.merchantId
  if (Option.isSome(state.keys[c.integration])) {
    return Either.left(new IntegrationAlreadyActive({ merchantId, integration: c.integration }))
  }
  const held = identityKeyHashes(state)
  const fresh = [c.production.identityKeyHash, c.test.identityKeyHash]
  if (fresh[0] === fresh[1] || fresh.some((h) => held.includes(h))) {
    return Either.left(new IdentityKeyReused({ merchantId }))
  }
  return ok(
    new IntegrationActivated({
      integration: c.integration,
      production: c.production,
      test: c.test,
      at: c.now
    })
  )
}

const rotate = (c: RotateKey, state: Existing): Decision<Event, Error> => {
  const merchantId = state.merchantId
  return Option.match(state.keys[c.integration], {
    onNone: () => Either.left(new IntegrationNotActive({ merchantId, integration: c.integration })),
    onSome: (keys) =>
      // A rotation must produce a new key: reusing any key the merchant holds would not revoke it.
      identityKeyHashes(state).includes(c.keyPair.identityKeyHash)
        ? Either.left(new IdentityKeyReused({ merchantId }))
        : ok(
            new KeyRotated({
              integration: c.integration,
              mode: c.mode,
              revokedIdentityKeyHash: keys[c.mode].identityKeyHash,
              keyPair: c.keyPair,
              at: c.now
            })
          )
  })
}

const bind = (c: BindTerminal, state: Existing): Decision<Event, Error> => {
  const merchantId = state.merchantId
  if (!Schema.is(TerminalModel)(c.model)) {
    return Either.left(new UnsupportedTerminalModel({ merchantId, model: c.model }))
  }
  const model = c.model
  return Option.match(terminalFor(state, c.serial), {
    onNone: () => ok(new TerminalBound({ serial: c.serial, model, name: c.name, at: c.now })),
    // Binding the same terminal again is a repeated request; binding a serial to something else is not.
    onSome: (t) =>
      t.model === model && t.name === c.name
        ? none
        : Either.left(new TerminalAlreadyBound({ merchantId, serial: c.serial }))
  })
}

// ---------------------------------------------------------------------------------------------
// Evolve
// ---------------------------------------------------------------------------------------------

const created = (event: MerchantCreated): Existing => ({
  _tag: "ENABLED",
  merchantId: event.merchantId,
  name: event.name,
  keys: { terminal_api: Option.none(), payment_button: Option.none() },
  terminals: [],
  terminalMethods: DEFAULT_TERMINAL_METHODS,
  linkMethods: {},
  webhooks: { production: Option.none(), test: Option.none() },
  createdAt: event.createdAt,
  updatedAt: event.createdAt
})

const evolveExisting = (state: Existing, event: Exclude<Event, MerchantCreated>): Existing => {
  const updateTerminal = (serial: TerminalSerial, f: (t: Terminal) => Terminal) =>
    state.terminals.map((t) => (t.serial === serial ? f(t) : t))
  return Match.valueTags(event, {
    MerchantEnabled: (e): Existing => ({ ...state, _tag: "ENABLED", updatedAt: e.at }),
    MerchantDisabled: (e): Existing => ({ ...state, _tag: "DISABLED", updatedAt: e.at }),
    IntegrationActivated: (e): Existing => ({
      ...state,
      keys: {
        ...state.keys,
        [e.integration]: Option.some({ production: e.production, test: e.test, activatedAt: e.at })
      },
      updatedAt: e.at
    }),
    KeyRotated: (e): Existing => ({
      ...state,
      keys: {
        ...state.keys,
        [e.integration]: Option.map(state.keys[e.integration], (keys) => ({ ...keys, [e.mode]: e.keyPair }))
      },
      updatedAt: e.at
    }),
    TerminalBound: (e): Existing => ({
      ...state,
      // Selected for the API only when the merchant selects it: "a terminal that is not selected does not work".
      terminals: [
        ...state.terminals,
        { serial: e.serial, model: e.model, name: e.name, apiEnabled: false, boundAt: e.at }
      ],
      updatedAt: e.at
    }),
    TerminalUnbound: (e): Existing => ({
      ...state,
      terminals: state.terminals.filter((t) => t.serial !== e.serial),
      updatedAt: e.at
    }),
    TerminalApiEnabled: (e): Existing => ({
      ...state,
      terminals: updateTerminal(e.serial, (t) => ({ ...t, apiEnabled: true })),
      updatedAt: e.at
    }),
    TerminalApiDisabled: (e): Existing => ({
      ...state,
      terminals: updateTerminal(e.serial, (t) => ({ ...t, apiEnabled: false })),
      updatedAt: e.at
    }),
    TerminalMethodSet: (e): Existing => ({
      ...state,
      terminalMethods: { ...state.terminalMethods, [e.method]: e.enabled },
      updatedAt: e.at
    }),
    LinkMethodSet: (e): Existing => ({
      ...state,
      linkMethods: { ...state.linkMethods, [e.method]: { min: e.min, max: e.max } },
      updatedAt: e.at
    }),
    LinkMethodRemoved: (e): Existing => {
      const { [e.method]: _removed, ...rest } = state.linkMethods
      return { ...state, linkMethods: rest, updatedAt: e.at }
    },
    WebhookSet: (e): Existing => ({
      ...state,
      webhooks: {
        ...state.webhooks,
        [e.mode]: Option.some({ url: e.url, standardWebhooks: e.standardWebhooks === true })
      },
      updatedAt: e.at
    }),
    WebhookDeleted: (e): Existing => ({
      ...state,
      webhooks: { ...state.webhooks, [e.mode]: Option.none() },
      updatedAt: e.at
    })
  })
}

/**
 * The Merchant aggregate.
 * @category aggregates
 */
export const Merchant: Aggregate<Command, Event, State, Error> = Aggregate.make({
  name: "Merchant",
  Event,
  transitions,
  refuse: Aggregate.refusals(
    { NotFound: MerchantNotFound, AlreadyExists: MerchantAlreadyExists, NotInState: MerchantNotInState },
    (state) => ({ merchantId: state.merchantId })
  ),
  create: { CreateMerchant: create },
  decide: decideExisting,
  created: { MerchantCreated: created },
  evolve: evolveExisting
})

/**
 * The aggregate's decider, as the module's own functions: `decide`, `evolve` and the state before creation.
 * @category aggregates
 */
export const { decide, evolve, initialState } = Merchant
