/**
 * `cobro trigger EVENT`: with a merchant's test key, over HTTP against a running Cobro (spec A, B, C),
 * creates what it takes for Cobro to send one webhook notification of a given type (spec D) to the
 * merchant's test webhook, and prints the ids it created, so that a developer can exercise a webhook
 * handler without a terminal or a card. The server is reached through the API's own contract
 * (`HttpApiClient` over `CobroApi`); every request with an effect carries an `Idempotency-Key`, so a
 * request retried after a lost connection takes effect once.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { CobroApi } from "@cobro/api/Api"
import * as LinkApi from "@cobro/domain/LinkApi"
import type * as NotificationApi from "@cobro/domain/NotificationApi"
import * as OnlineApi from "@cobro/domain/OnlineApi"
import type * as SigningKey from "@cobro/domain/SigningKey"
import * as TerminalApi from "@cobro/domain/TerminalApi"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { randomBytes } from "node:crypto"
import * as ServerConfig from "../Config.js"
import { UserError } from "./CliError.js"
import * as Output from "./Output.js"

// ---------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------

/** What an event needs and promises: the key's integration, the notification type, what it does. */
export interface EventSpec {
  readonly integration: SigningKey.Integration
  readonly notification: NotificationApi.NotificationType
  readonly summary: string
}

/** The sandbox total the simulated acquirer approves without 3DS (spec C, sandbox amounts). */
export const APPROVED_TOTAL = 555040
/** The sandbox total the simulated acquirer's fraud engine rejects. */
export const REJECTED_TOTAL = 555042

/**
 * The events: `<origin>.<notification type>`, the origin being what raises it (spec D, Emitters).
 * A terminal sale's void (VOID_APPROVED, VOID_REJECTED on the terminal API) has no HTTP path to
 * cause it, and a refund (C8) raises no notification: neither is here.
 */
export const EVENTS = {
  "terminal.sale_approved": {
    integration: "terminal_api",
    notification: "SALE_APPROVED",
    summary: "an A3 checkout on a bound simulated terminal set to auto_approve"
  },
  "terminal.sale_rejected": {
    integration: "terminal_api",
    notification: "SALE_REJECTED",
    summary: "an A3 checkout on a bound simulated terminal set to auto_reject (then auto_approve again)"
  },
  "link.sale_approved": {
    integration: "payment_button",
    notification: "SALE_APPROVED",
    summary: `a CLOSE link of COP ${APPROVED_TOTAL} paid by card on its checkout page (PAID)`
  },
  "link.sale_rejected": {
    integration: "payment_button",
    notification: "SALE_REJECTED",
    summary: `a CLOSE link of COP ${REJECTED_TOTAL} paid by card on its checkout page, rejected (ACTIVE again)`
  },
  "online.sale_approved": {
    integration: "payment_button",
    notification: "SALE_APPROVED",
    summary: `an intent of COP ${APPROVED_TOTAL} and a card attempt, approved without 3DS`
  },
  "online.sale_rejected": {
    integration: "payment_button",
    notification: "SALE_REJECTED",
    summary: `an intent of COP ${REJECTED_TOTAL} and a card attempt, rejected by the fraud engine`
  },
  "online.void_approved": {
    integration: "payment_button",
    notification: "VOID_APPROVED",
    summary: `an intent of COP ${APPROVED_TOTAL}, a card attempt approved, then voided (C7; before 21:00 Bogotá)`
  }
} as const satisfies Record<string, EventSpec>

/** An event's name. */
export type EventName = keyof typeof EVENTS

/** The events' names, in the order `--help` lists them. */
export const EVENT_NAMES = Object.keys(EVENTS) as ReadonlyArray<EventName>

const isEventName = (name: string): name is EventName => Object.hasOwn(EVENTS, name)

/** The help text's list of events. */
export const eventsHelp = EVENT_NAMES.map(
  (name) => `${name} (${EVENTS[name].notification}): ${EVENTS[name].summary}`
).join("; ")

// ---------------------------------------------------------------------------------------------
// Keys
// ---------------------------------------------------------------------------------------------

const KEY_NAMES: Record<SigningKey.Integration, string> = {
  terminal_api: "the terminal API test key (id_test_term_…)",
  payment_button: "the payment button test key (id_test_btn_…)"
}

/**
 * Whether `key` may trigger `event`: Cobro's identity keys say their mode and integration
 * (`id_test_term_…`, `id_live_btn_…`, `MerchantAdmin.keyPrefix`), so a production key is refused
 * before any request, and so is the other integration's key.
 */
export const checkKey = (event: EventName, key: string): Option.Option<string> => {
  const needed = EVENTS[event].integration
  if (key.startsWith("id_live_") || key.startsWith("sk_live_")) {
    return Option.some(
      `cobro trigger takes a test key: this is a production key, and nothing was created (${event} needs ${KEY_NAMES[needed]})`
    )
  }
  if (key.startsWith("sk_")) {
    return Option.some(`this is a secret key: send the identity key, ${KEY_NAMES[needed]}`)
  }
  const match = /^id_test_(term|btn)_/.exec(key)
  if (match === null) {
    return Option.some(`not a Cobro test identity key: ${event} needs ${KEY_NAMES[needed]}`)
  }
  const integration: SigningKey.Integration = match[1] === "term" ? "terminal_api" : "payment_button"
  return integration === needed
    ? Option.none()
    : Option.some(`${event} needs ${KEY_NAMES[needed]}, not ${KEY_NAMES[integration]}`)
}

// ---------------------------------------------------------------------------------------------
// The client
// ---------------------------------------------------------------------------------------------

/** The `Idempotency-Key` of the request being made, if it has an effect. */
const currentIdempotencyKey = FiberRef.unsafeMake<Option.Option<string>>(Option.none())

/** Adds the merchant's key and the current idempotency key to every request. */
const authenticated = (apiKey: string) => (client: HttpClient.HttpClient) =>
  client.pipe(
    HttpClient.mapRequest(HttpClientRequest.setHeader("authorization", `x-api-key ${apiKey}`)),
    HttpClient.mapRequestEffect((request) =>
      Effect.map(FiberRef.get(currentIdempotencyKey), (key) =>
        Option.isSome(key) ? HttpClientRequest.setHeader(request, "idempotency-key", key.value) : request
      )
    )
  )

const makeClient = (baseUrl: string, apiKey: string) =>
  HttpApiClient.make(CobroApi, { baseUrl, transformClient: authenticated(apiKey) })

type Client = Effect.Effect.Success<ReturnType<typeof makeClient>>

/** What a run knows: the client, where the server is, the run's id (in references and idempotency keys). */
interface Run {
  readonly client: Client
  /** The client the API's calls go through (the key and the idempotency key added). */
  readonly api: HttpClient.HttpClient
  /** The client for the payer's side (no key). */
  readonly http: HttpClient.HttpClient
  readonly apiUrl: string
  readonly runId: string
  readonly event: EventName
}

const isEnvelopeError = (
  error: unknown
): error is {
  readonly _tag: string
  readonly status: number
  readonly errors: ReadonlyArray<{ code: string; message: string; field?: string }>
} =>
  Predicate.hasProperty(error, "errors") &&
  Array.isArray(error.errors) &&
  error.errors.length > 0 &&
  Predicate.hasProperty(error, "status")

/** A failed request explained in one sentence. */
const explain = (run: Run, step: string, error: unknown): UserError => {
  if (isEnvelopeError(error)) {
    if (error.status === 401) {
      return new UserError({ message: `${step}: the API key is unknown or revoked (401)` })
    }
    const items = error.errors
      .map((item) => `${item.code}: ${item.message}${item.field ? ` (${item.field})` : ""}`)
      .join("; ")
    const hint =
      error.status === 403 ? ` (${run.event} needs ${KEY_NAMES[EVENTS[run.event].integration]})` : ""
    return new UserError({ message: `${step}: Cobro answered ${error.status} ${items}${hint}` })
  }
  if (Predicate.isTagged(error, "RequestError")) {
    return new UserError({
      message: `${step}: cannot reach Cobro at ${run.apiUrl} (${(error as { message?: string }).message ?? "no answer"}); set --api-url or COBRO_API_URL`
    })
  }
  if (Predicate.isTagged(error, "ResponseError")) {
    const status = (error as { response?: { status?: number } }).response?.status
    return new UserError({
      message: `${step}: unexpected answer ${status ?? ""} from ${run.apiUrl}: is it a Cobro server?`
    })
  }
  if (Predicate.isTagged(error, "ParseError")) {
    return new UserError({
      message: `${step}: the answer of ${run.apiUrl} does not match Cobro's API (${String((error as { message?: string }).message).split("\n")[0]})`
    })
  }
  return new UserError({ message: `${step}: ${String(error)}` })
}

/**
 * A request that may be lost on the way (the connection dropped, the database away for a moment, the
 * lost try still running under its idempotency key): retried, with the same idempotency key.
 */
const isTransient = (error: unknown) =>
  Predicate.isTagged(error, "RequestError") ||
  (isEnvelopeError(error) &&
    (error.status === 503 || (error.status === 409 && error.errors[0]?.code === "IdempotencyKeyInUse")))

/**
 * One step: the request retried a few times if it was lost, and its failure explained. A request
 * that has an effect goes through {@link keyedStep}.
 */
const step = <A, E, R>(
  run: Run,
  name: string,
  request: Effect.Effect<A, E, R>
): Effect.Effect<A, UserError, R> =>
  request.pipe(
    Effect.retry({ while: isTransient, schedule: Schedule.spaced("500 millis"), times: 4 }),
    Effect.mapError((error) => explain(run, name, error))
  )

/** A step whose request has an effect: made with the idempotency key `<run>-<step>`, so a retry does it once. */
const keyedStep = <A, E, R>(
  run: Run,
  name: string,
  request: Effect.Effect<A, E, R>
): Effect.Effect<A, UserError, R> =>
  step(
    run,
    name,
    Effect.locally(
      request,
      currentIdempotencyKey,
      Option.some(`cobro-trigger-${run.runId}-${name.replace(/[^A-Za-z0-9]+/g, "-")}`)
    )
  )

/** Retries `check` every 250 ms until it succeeds, for at most `timeout`; then fails with `message`. */
const waitFor = <A, E, R>(
  check: Effect.Effect<Option.Option<A>, E, R>,
  timeout: Duration.DurationInput,
  message: () => string
): Effect.Effect<A, E | UserError, R> =>
  Effect.flatMap(
    check,
    Option.match({ onNone: () => Effect.fail("pending" as const), onSome: Effect.succeed })
  ).pipe(
    Effect.retry({ while: (e) => e === "pending", schedule: Schedule.spaced("250 millis") }),
    Effect.timeoutFail({ duration: timeout, onTimeout: () => new UserError({ message: message() }) }),
    Effect.catchIf(
      (e): e is "pending" => e === "pending",
      () => Effect.fail(new UserError({ message: message() }))
    )
  )

// ---------------------------------------------------------------------------------------------
// Scenarios
// ---------------------------------------------------------------------------------------------

/** A resource a trigger created or used, printed one per line. */
export interface Resource {
  readonly kind: "terminal" | "checkout" | "link" | "intent" | "transaction"
  readonly id: string
}

/** What a trigger did: the resources, the notification to expect and its subject, and notes. */
export interface Triggered {
  readonly event: EventName
  readonly notification: NotificationApi.NotificationType
  /** The transaction the notification is about (the envelope's `subject`, `data.payment_id`). */
  readonly transactionId: string
  /** `data.metadata.reference` of the notification. */
  readonly reference: string
  readonly resources: ReadonlyArray<Resource>
  readonly notes: ReadonlyArray<string>
}

/** What a trigger made: the resources that led to the transaction, then the transaction. */
const made = (
  transactionId: string,
  reference: string,
  leading: ReadonlyArray<Resource>,
  notes: ReadonlyArray<string> = []
): Omit<Triggered, "event" | "notification"> => ({
  transactionId,
  reference,
  resources: [...leading, { kind: "transaction", id: transactionId }],
  notes
})

const decodeCheckout = Schema.decodeUnknown(TerminalApi.CheckoutRequest)
const decodeLink = Schema.decodeUnknown(LinkApi.CreateLinkRequest)
const decodeIntent = Schema.decodeUnknown(OnlineApi.IntentCreateRequest)
const decodeAttempt = Schema.decodeUnknown(OnlineApi.AttemptRequest)

/** A body of ours that our own schema refuses is a bug. */
const ours = <A, E, R>(decoded: Effect.Effect<A, E, R>) => Effect.orDie(decoded)

const OUTCOME_TIMEOUT = Duration.seconds(30)

/** terminal.*: A2 picks the terminal, the sandbox sets its behaviour, A3 charges, A4 shows the outcome. */
const terminalSale = (run: Run, outcome: "approve" | "reject", serial: Option.Option<string>) =>
  Effect.gen(function* () {
    const { client } = run
    const bound = yield* step(run, "list the bound terminals (A2)", client.terminal.boundTerminals())
    const terminals = bound.payload.available_terminals
    const terminal = Option.match(serial, {
      onNone: () => terminals[0],
      onSome: (s) => terminals.find((t) => t.terminal_serial === s)
    })
    if (terminal === undefined) {
      return yield* new UserError({
        message: Option.match(serial, {
          onNone: () =>
            "the merchant has no bound terminal: bind one first (cobro terminal bind, then cobro terminal enable)",
          onSome: (s) =>
            `no terminal ${s} is bound to the merchant; bound: ${terminals.map((t) => t.terminal_serial).join(", ") || "none"}`
        })
      })
    }
    const methods = yield* step(run, "read the payment methods (A1)", client.terminal.paymentMethods())
    const pos = methods.payload.payment_methods.find((m) => m.name === "POS")
    if (pos === undefined || !pos.enabled) {
      return yield* new UserError({
        message: "the merchant's POS payment method is disabled: a terminal sale needs it on"
      })
    }
    const path = { terminal_serial: terminal.terminal_serial }
    const behavior = outcome === "approve" ? "auto_approve" : "auto_reject"
    const state = yield* keyedStep(
      run,
      `set terminal ${terminal.terminal_serial} to ${behavior}`,
      client.sandbox.setBehavior({ path, payload: { mode: behavior } })
    )
    const restore = keyedStep(
      run,
      `set terminal ${terminal.terminal_serial} back to auto_approve`,
      client.sandbox.setBehavior({ path, payload: { mode: "auto_approve" } })
    )
    if (!state.reachable || state.locked) {
      if (outcome === "reject") yield* Effect.ignore(restore)
      return yield* new UserError({
        message: `terminal ${terminal.terminal_serial} cannot take a charge now (power ${state.power}, app ${state.app_state}, session ${state.session}${state.locked ? ", locked" : ""}): use POST /sandbox/v1/terminals/${terminal.terminal_serial}/actions with power_on, unlock…`
      })
    }
    const { created, notification, reference } = yield* Effect.gen(function* () {
      const reference = `cobro-trigger-${run.runId}`
      const body = yield* ours(
        decodeCheckout({
          amount: {
            currency: "COP",
            total_amount: 11900,
            taxes: [{ type: "VAT", base: 10000, value: 1900 }],
            tip_amount: 0
          },
          user_email: "cobro-trigger@example.com",
          payment_method: "POS",
          terminal_model: terminal.terminal_model,
          terminal_serial: terminal.terminal_serial,
          reference,
          description: `cobro trigger ${run.event}`
        })
      )
      const created = yield* keyedStep(
        run,
        "create the checkout (A3)",
        client.terminal.checkout({ payload: body })
      )
      const expected = EVENTS[run.event].notification
      const notification = yield* waitFor(
        Effect.map(
          step(
            run,
            "read the notifications (A4)",
            client.terminal.notifications({
              path: { payment_id: reference },
              urlParams: { is_external_reference: true }
            })
          ),
          (answer) => Option.fromNullable(answer.notifications.find((n) => n.type === expected))
        ),
        OUTCOME_TIMEOUT,
        () =>
          `checkout ${created.payload.integration_id} on terminal ${terminal.terminal_serial} had no ${expected} after ${Duration.format(OUTCOME_TIMEOUT)}: is the terminal reachable?`
      )
      return { created, notification, reference }
    }).pipe(
      // A rejecting terminal is left as nobody configured it, so that the developer's next sale is
      // approved; when the charge failed too.
      outcome === "reject" ? Effect.onError(() => Effect.ignore(restore)) : (e) => e
    )
    const notes: Array<string> = []
    if (outcome === "reject") {
      yield* restore
      notes.push(`terminal ${terminal.terminal_serial} is back to auto_approve`)
    } else {
      notes.push(`terminal ${terminal.terminal_serial} is set to auto_approve`)
    }
    return made(
      notification.subject,
      reference,
      [
        { kind: "terminal", id: terminal.terminal_serial },
        { kind: "checkout", id: created.payload.integration_id }
      ],
      notes
    )
  })

/** The card form of the checkout page, as a payer fills it in (a card that expires in two years). */
const cardForm = (now: Date) => ({
  method: "CREDIT_CARD",
  card_number: "4111111111111111",
  card_name: "Ana Gómez",
  card_expiry: `12/${String((now.getUTCFullYear() + 2) % 100).padStart(2, "0")}`,
  card_cvc: "123",
  installments: "1"
})

/** link.*: B1 checks the card bounds, B2 creates a CLOSE link, its checkout page is paid by card. */
const linkPayment = (run: Run, total: number) =>
  Effect.gen(function* () {
    const { client } = run
    const methods = yield* step(run, "read the link methods (B1)", client.links.paymentMethods())
    const card = methods.payload.payment_methods.CREDIT_CARD
    if (card === undefined) {
      return yield* new UserError({
        message: "the merchant does not offer CREDIT_CARD on links: a link paid by card needs it"
      })
    }
    if (total < card.min || total > card.max) {
      return yield* new UserError({
        message: `the merchant's CREDIT_CARD link bounds (${card.min} to ${card.max}) do not admit ${total}, the sandbox amount ${run.event} needs`
      })
    }
    const reference = `cobro-trigger-${run.runId}`
    const body = yield* ours(
      decodeLink({
        amount_type: "CLOSE",
        amount: { currency: "COP", total_amount: total },
        reference,
        description: `cobro trigger ${run.event}`,
        payment_methods: ["CREDIT_CARD"]
      })
    )
    const created = yield* keyedStep(run, "create the link (B2)", client.links.createLink({ payload: body }))
    const linkId = created.payload.payment_link
    // The payer's side: the checkout page's form, no API key.
    const form = HttpClientRequest.post(created.payload.url).pipe(
      HttpClientRequest.bodyUrlParams(cardForm(new Date(yield* Clock.currentTimeMillis))),
      HttpClientRequest.setHeader("idempotency-key", `cobro-trigger-${run.runId}-pay`)
    )
    const response = yield* step(run, `pay link ${linkId} on its checkout page`, run.http.execute(form))
    // Approved: the transaction's page; declined: the link's page again, `?declined=<transaction>`.
    const location = decodeURIComponent(response.headers["location"] ?? "")
    const approved = /\/payments\/(TRX_[A-Za-z0-9_-]+)/.exec(location)?.[1]
    const declined = /[?&]declined=(TRX_[A-Za-z0-9_-]+)/.exec(location)?.[1]
    const transactionId = total === APPROVED_TOTAL ? approved : declined
    if (response.status !== 303 || transactionId === undefined) {
      return yield* new UserError({
        message:
          response.status === 303
            ? `the payment of link ${linkId} was ${approved === undefined ? "declined" : "approved"}, not what ${run.event} expects: does the server run the sandbox acquirer?`
            : `the checkout page of link ${linkId} (${created.payload.url}) did not take the payment (HTTP ${response.status})`
      })
    }
    return made(transactionId, reference, [{ kind: "link", id: linkId }])
  })

/** online.*: C1 an intent, C4 a card attempt, C5 until decided; then C7 the void if asked. */
const onlinePayment = (run: Run, total: number, voided: boolean) =>
  Effect.gen(function* () {
    const { client } = run
    const reference = `cobro-trigger-${run.runId}`
    const intent = yield* ours(
      decodeIntent({
        reference_id: reference,
        amount: { currency: "COP", total_amount: total },
        description: `cobro trigger ${run.event}`
      })
    )
    const created = yield* keyedStep(
      run,
      "create the intent (C1)",
      client.online.createIntent({ payload: intent })
    )
    if (!created.test) {
      // Unreachable with a test key; a server that says otherwise is not charged further.
      return yield* new UserError({ message: `intent ${reference} is not a test intent: stopped` })
    }
    const attempt = yield* ours(
      decodeAttempt({
        reference_id: reference,
        payer: { person_type: "NATURAL_PERSON", name: "Ana Gómez", email: "ana@example.com" },
        payment_method: { name: "CREDIT_CARD", card_number: "4111111111111111", installments: 1 }
      })
    )
    const attempted = yield* keyedStep(
      run,
      "pay the intent by card (C4)",
      client.online.attempt({ payload: attempt })
    )
    if (!("transaction_id" in attempted)) {
      return yield* new UserError({
        message: `the attempt on intent ${reference} asks for a 3DS challenge: ${run.event} expects none`
      })
    }
    const transactionId = attempted.transaction_id
    const statusIs = (wanted: ReadonlyArray<OnlineApi.PaymentStatus>, what: string) =>
      waitFor(
        Effect.map(
          step(
            run,
            "read the payment (C5)",
            client.online.readPayment({ path: { reference_id: reference } })
          ),
          (payment) => (wanted.includes(payment.status) ? Option.some(payment.status) : Option.none())
        ),
        OUTCOME_TIMEOUT,
        () => `payment ${transactionId} was not ${what} after ${Duration.format(OUTCOME_TIMEOUT)}`
      )
    const decided = yield* statusIs(["APPROVED", "REJECTED"], "decided")
    const expected = total === APPROVED_TOTAL ? "APPROVED" : "REJECTED"
    if (decided !== expected) {
      return yield* new UserError({
        message: `payment ${transactionId} was ${decided}, not ${expected}: does the server run the sandbox acquirer?`
      })
    }
    if (voided) {
      yield* keyedStep(
        run,
        `void payment ${transactionId} (C7)`,
        client.online.voidPayment({ payload: { transaction_id: transactionId } })
      )
      yield* statusIs(["VOIDED"], "voided")
    }
    return made(transactionId, reference, [{ kind: "intent", id: reference }])
  })

// ---------------------------------------------------------------------------------------------
// The command
// ---------------------------------------------------------------------------------------------

/** What `cobro trigger` is asked. */
export interface TriggerInput {
  readonly event: string
  readonly apiKey: string
  readonly apiUrl: string
  /** The terminal to use for terminal events (default: the first bound one A2 lists). */
  readonly terminal?: Option.Option<string> | undefined
}

/**
 * Triggers `input.event`: checks the key, then creates what the event needs over HTTP. Needs an
 * `HttpClient` that does not follow redirects (the checkout page answers the payment with a 303).
 */
export const trigger = Effect.fn("Trigger.trigger")(function* (input: TriggerInput) {
  const name = input.event.trim().toLowerCase()
  if (!isEventName(name)) {
    return yield* new UserError({
      message: `unknown event ${JSON.stringify(input.event)}: choose one of ${EVENT_NAMES.join(", ")}`
    })
  }
  if (input.apiKey === "") {
    return yield* new UserError({
      message: `no API key: pass --api-key or set COBRO_API_KEY (${name} needs ${KEY_NAMES[EVENTS[name].integration]})`
    })
  }
  const refused = checkKey(name, input.apiKey)
  if (Option.isSome(refused)) return yield* new UserError({ message: refused.value })
  const apiUrl = input.apiUrl.replace(/\/+$/, "")
  if (!/^https?:\/\/[^/]/.test(apiUrl)) {
    return yield* new UserError({
      message: `--api-url must be an http(s) URL, not ${JSON.stringify(input.apiUrl)}`
    })
  }
  const http = yield* HttpClient.HttpClient
  const run: Run = {
    client: yield* makeClient(apiUrl, input.apiKey),
    api: authenticated(input.apiKey)(http),
    http,
    apiUrl,
    runId: randomBytes(6).toString("hex"),
    event: name
  }
  const done = yield* (() => {
    switch (name) {
      case "terminal.sale_approved":
        return terminalSale(run, "approve", input.terminal ?? Option.none())
      case "terminal.sale_rejected":
        return terminalSale(run, "reject", input.terminal ?? Option.none())
      case "link.sale_approved":
        return linkPayment(run, APPROVED_TOTAL)
      case "link.sale_rejected":
        return linkPayment(run, REJECTED_TOTAL)
      case "online.sale_approved":
        return onlinePayment(run, APPROVED_TOTAL, false)
      case "online.sale_rejected":
        return onlinePayment(run, REJECTED_TOTAL, false)
      case "online.void_approved":
        return onlinePayment(run, APPROVED_TOTAL, true)
    }
  })()
  return { event: name, notification: EVENTS[name].notification, ...done } satisfies Triggered
})

/** The lines printed: one per resource, then the notification to expect (or one JSON object). */
export const render = (triggered: Triggered, options: { readonly json: boolean }): ReadonlyArray<string> =>
  options.json
    ? [
        JSON.stringify({
          event: triggered.event,
          notification: triggered.notification,
          subject: triggered.transactionId,
          reference: triggered.reference,
          ...Object.fromEntries(triggered.resources.map((r) => [r.kind, r.id])),
          notes: triggered.notes
        })
      ]
    : [
        ...triggered.resources.map((r) => `${r.kind.padEnd(12)} ${r.id}`),
        `${"notification".padEnd(12)} ${triggered.notification} for ${triggered.transactionId} (reference ${triggered.reference}) to the test webhook`,
        ...triggered.notes.map((note) => `note: ${note}`)
      ]

/** The server's default local URL (`Config.defaultHost`, `Config.defaultPort`). */
export const defaultApiUrl = `http://${ServerConfig.defaultHost}:${ServerConfig.defaultPort}`

const fromEnvironment = (option: Option.Option<string>, variable: string) =>
  Option.match(option, {
    onSome: (value) => Effect.succeed(Option.some(value)),
    onNone: () => Config.option(Config.nonEmptyString(variable))
  })

/** `cobro trigger EVENT`: resolves the key and URL (options, then environment), triggers, prints. */
export const command = Command.make(
  "trigger",
  {
    event: Args.text({ name: "EVENT" }).pipe(Args.withDescription(`one of: ${eventsHelp}`)),
    apiKey: Options.redacted("api-key").pipe(
      Options.optional,
      Options.withDescription(
        "the merchant's TEST identity key (default: COBRO_API_KEY): id_test_term_… for terminal.*, id_test_btn_… for link.* and online.*"
      )
    ),
    apiUrl: Options.text("api-url").pipe(
      Options.optional,
      Options.withDescription(`the Cobro server (default: COBRO_API_URL, else ${defaultApiUrl})`)
    ),
    terminal: Options.text("terminal").pipe(
      Options.withPseudoName("SERIAL"),
      Options.optional,
      Options.withDescription("terminal.*: the simulated terminal to charge (default: the first bound one)")
    ),
    json: Options.boolean("json").pipe(Options.withDescription("print one JSON object instead of text"))
  },
  ({ apiKey, apiUrl, event, json, terminal }) =>
    Effect.gen(function* () {
      const key = yield* fromEnvironment(Option.map(apiKey, Redacted.value), "COBRO_API_KEY")
      const url = Option.getOrElse(yield* fromEnvironment(apiUrl, "COBRO_API_URL"), () => defaultApiUrl)
      const triggered = yield* trigger({
        event,
        apiKey: Option.getOrElse(key, () => ""),
        apiUrl: url,
        terminal
      })
      for (const line of render(triggered, { json })) yield* Output.line(line)
    }).pipe(Effect.provide(NodeHttpClient.layer))
).pipe(
  Command.withDescription(
    `create, with a test key over HTTP, what makes Cobro send one webhook notification to the merchant's test webhook, and print its ids. EVENT: ${EVENT_NAMES.join(", ")}`
  )
)
