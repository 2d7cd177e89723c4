/**
 * The operator's commands (issue 7, "Administration"): the admin API's use cases of
 * `MerchantAdmin`, called here as the admin handlers call them (one implementation, two doors),
 * with the admin API's JSON bodies under `--json` and a readable summary otherwise.
 */
import { TerminalSerial } from "@cobro/domain/Ids"
import * as Merchant from "@cobro/domain/Merchant"
import * as MerchantAdmin from "@cobro/domain/MerchantAdmin"
import type { Integration, KeyMode } from "@cobro/domain/SigningKey"
import * as AdminEndpoints from "@cobro/api/AdminEndpoints"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Os from "node:os"
import { UserError } from "./CliError.js"
import * as Output from "./Output.js"

/** Who the log records as the actor of the command line's events: `cli:<login>`. */
export const actor = (): string => {
  try {
    return `cli:${Os.userInfo().username}`
  } catch {
    return "cli"
  }
}

const metadata = () => ({ actor: actor() })

/** `--json`: print the admin API's JSON body instead of a summary. */
type Printing = { readonly json: boolean }

/** The merchant a command acts on (`--merchant`). */
type OfMerchant = { readonly merchant: string }

/** A merchant's domain error in one sentence. */
export const describeMerchantError = (merchantId: string, error: Merchant.Error): string => {
  switch (error._tag) {
    case "MerchantNotFound":
      return `no merchant '${merchantId}'`
    case "TerminalNotBound":
      return `no terminal '${error.serial}' is bound to merchant ${merchantId}`
    case "UnsupportedTerminalModel":
      return `terminal model '${error.model}' is not supported: use SMART or SMART_PRO`
    case "TerminalAlreadyBound":
      return `terminal '${error.serial}' is bound to merchant ${merchantId} already, with another model or name`
    case "InvalidMethodBounds":
      return `the bounds of ${error.method} are invalid: min must not exceed max`
    case "InvalidWebhookUrl":
      return `the ${error.mode} webhook must be an ${Merchant.acceptsHttp(error) ? "http:// or https://" : "https://"} URL, not '${error.url}'`
    case "MerchantNotInState":
      return `merchant ${merchantId} is ${error.status}: it does not allow ${error.command}`
    case "MerchantAlreadyExists":
    case "IntegrationAlreadyActive":
    case "IntegrationNotActive":
    case "IdentityKeyReused":
      return `merchant ${merchantId} is not in a state that allows this (${error._tag})`
  }
}

const refused = (merchantId: string) => (error: Merchant.Error) =>
  new UserError({ message: describeMerchantError(merchantId, error) })

const decodeOr = <A, I>(schema: Schema.Schema<A, I>, value: unknown, message: string) =>
  Schema.decodeUnknown(schema)(value).pipe(Effect.mapError(() => new UserError({ message })))

const print = (json: boolean, body: unknown, human: ReadonlyArray<string>) =>
  Output.line(json ? JSON.stringify(body) : human.join("\n"))

const clearPair = (pair: MerchantAdmin.ClearKeyPair) => ({
  identity_key: pair.identityKey,
  secret_key: pair.secretKey
})

/** `cobro merchant create --name <name>`: the account and its four key pairs, shown once. */
export const createMerchant = (name: string, options: Printing) =>
  Effect.gen(function* () {
    const valid = yield* decodeOr(
      AdminEndpoints.MerchantName,
      name,
      "--name must be a name of 1 to 200 characters, without spaces around it"
    )
    const created = yield* MerchantAdmin.createMerchant(valid, metadata()).pipe(
      Effect.mapError(refused("(new)"))
    )
    const body = {
      merchant_id: created.merchantId,
      keys: {
        terminal_api: {
          production: clearPair(created.keys.terminal_api.production),
          test: clearPair(created.keys.terminal_api.test)
        },
        payment_button: {
          production: clearPair(created.keys.payment_button.production),
          test: clearPair(created.keys.payment_button.test)
        }
      }
    }
    const rows = (["terminal_api", "payment_button"] as const).flatMap((integration) =>
      (["production", "test"] as const).map((mode) => [
        integration,
        mode,
        body.keys[integration][mode].identity_key,
        body.keys[integration][mode].secret_key
      ])
    )
    yield* print(options.json, body, [
      `Merchant ${created.merchantId} created ("${valid}").`,
      Output.table(["INTEGRATION", "MODE", "IDENTITY KEY", "SECRET KEY"], rows),
      "The secret keys are shown only now: keep them."
    ])
  })

const serialOf = (serial: string) =>
  decodeOr(TerminalSerial, serial, "--serial must be a serial number of 1 to 64 characters")

const terminalBody = (t: Merchant.Terminal) => ({
  terminal_model: t.model,
  terminal_serial: t.serial,
  name: t.name,
  status: "BINDED",
  api_enabled: t.apiEnabled
})

/**
 * A use case on one of the merchant's terminals, its `--serial` checked first: prints the terminal
 * as it stands after it (the admin API's body under `--json`, else `summary`).
 */
const onTerminal = <R>(
  input: OfMerchant & { readonly serial: string },
  options: Printing,
  useCase: (serial: TerminalSerial) => Effect.Effect<Merchant.Terminal, Merchant.Error, R>,
  summary: (terminal: Merchant.Terminal) => string
) =>
  Effect.gen(function* () {
    const serial = yield* serialOf(input.serial)
    const terminal = yield* useCase(serial).pipe(Effect.mapError(refused(input.merchant)))
    yield* print(options.json, terminalBody(terminal), [summary(terminal)])
  })

/** `cobro terminal bind`: binds a Smart or Smart Pro to the merchant (not yet enabled for the API). */
export const bindTerminal = (
  input: OfMerchant & { readonly serial: string; readonly model: string; readonly name: string },
  options: Printing
) =>
  onTerminal(
    input,
    options,
    (serial) =>
      MerchantAdmin.bindTerminal(
        input.merchant,
        { model: input.model, serial, name: input.name },
        metadata()
      ),
    (terminal) =>
      `Terminal ${terminal.serial} (${terminal.model}, "${terminal.name}") is bound to ${input.merchant}; ` +
      `API ${terminal.apiEnabled ? "enabled" : "not enabled yet (cobro terminal enable)"}.`
  )

/** `cobro terminal enable` / `disable`: selects a bound terminal for the API, or deselects it. */
export const setTerminalApi = (
  input: OfMerchant & { readonly serial: string },
  enabled: boolean,
  options: Printing
) =>
  onTerminal(
    input,
    options,
    (serial) => MerchantAdmin.setTerminalApiEnabled(input.merchant, serial, enabled, metadata()),
    (terminal) =>
      `Terminal ${terminal.serial} of ${input.merchant}: API ${terminal.apiEnabled ? "enabled" : "disabled"}.`
  )

/** `cobro webhook set`: registers the merchant's production or test webhook. */
export const setWebhook = (
  input: OfMerchant & { readonly mode: KeyMode; readonly url: string; readonly standardWebhooks: boolean },
  options: Printing
) =>
  Effect.gen(function* () {
    const set = yield* MerchantAdmin.setWebhook(input.merchant, input.mode, input.url, {
      metadata: metadata(),
      standardWebhooks: input.standardWebhooks
    }).pipe(Effect.mapError(refused(input.merchant)))
    yield* print(options.json, AdminEndpoints.webhookBody(set), [
      `The ${set.mode} webhook of ${input.merchant} is ${set.url}${set.standardWebhooks ? ", with the Standard Webhooks headers" : ""}.`
    ])
  })

/** `cobro keys rotate`: revokes one key pair and issues its replacement, shown once. */
export const rotateKey = (
  input: OfMerchant & { readonly integration: Integration; readonly mode: KeyMode },
  options: Printing
) =>
  Effect.gen(function* () {
    const pair = yield* MerchantAdmin.rotateKey(
      input.merchant,
      input.integration,
      input.mode,
      metadata()
    ).pipe(Effect.mapError(refused(input.merchant)))
    const body = { integration: input.integration, mode: input.mode, ...clearPair(pair) }
    yield* print(options.json, body, [
      `The ${input.mode} ${input.integration} key pair of ${input.merchant} was rotated; the old identity key no longer authenticates.`,
      `  identity key  ${pair.identityKey}`,
      `  secret key    ${pair.secretKey}`,
      "The secret key is shown only now: keep it."
    ])
  })
