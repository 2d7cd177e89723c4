/**
 * `cobro listen --forward-to URL`: a developer's test-mode webhook on their own machine, against a
 * Cobro anywhere (spec D). It opens `GET /dev/v1/listen` with a test key (Server-Sent Events over one
 * long-lived request, so the laptop needs no public URL), prints the signing secret, and POSTs each
 * test-mode notification to the local URL with the exact body and the headers a delivery attempt
 * carries, printing one line per notification with the local answer. The open stream is the
 * registration: nothing about the merchant changes, so a killed listener leaves nothing behind.
 * A dropped stream is resumed from the last event id (nothing skipped, nothing twice), after a
 * backoff; Ctrl-C ends it with status 0.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as WebhookDelivery from "@cobro/domain/WebhookDelivery"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as ServerConfig from "../Config.js"
import { UserError } from "./CliError.js"
import * as Output from "./Output.js"
import * as ServerSentEvents from "./ServerSentEvents.js"

/** The stream's path on the server (`@cobro/http/ListenEndpoint`). */
export const PATH = "/dev/v1/listen"

/** Where the server listens by default (`Config.defaultHost`, `Config.defaultPort`). */
export const DEFAULT_API_URL = `http://${ServerConfig.defaultHost}:${ServerConfig.defaultPort}`

/** How long the local endpoint may take to answer a forwarded notification. */
export const FORWARD_TIMEOUT = Duration.seconds(10)

/** A stream silent this long (three heartbeats missed) is taken as dropped. */
export const SILENCE_TIMEOUT = Duration.seconds(45)

/** The waits before the successive reconnections; the last repeats. Reset by each `ready`. */
export const BACKOFF: ReadonlyArray<Duration.Duration> = [
  Duration.millis(250),
  Duration.seconds(1),
  Duration.seconds(2),
  Duration.seconds(5),
  Duration.seconds(10)
]

/** What `cobro listen` was asked. */
export interface ListenOptions {
  readonly forwardTo: string
  readonly apiKey: Redacted.Redacted<string>
  readonly apiUrl: string
  /** Only these notification types; all when none. */
  readonly events: Option.Option<ReadonlyArray<WebhookDelivery.NotificationType>>
}

/** Where the listener writes and what stops it: the terminal and Ctrl-C, or a test's own. */
export interface Io {
  readonly out: (line: string) => Effect.Effect<void>
  readonly err: (line: string) => Effect.Effect<void>
  /** Completes when the listener is to stop (with status 0). */
  readonly stop: Effect.Effect<void>
}

/**
 * Completes on SIGINT or SIGTERM, which it takes from the runtime meanwhile (`runMain` would
 * interrupt the program, and `cobro` then exits 130): stopping is how `listen` ends, so it ends well.
 */
export const signalled: Effect.Effect<void> = Effect.async<void>((resume) => {
  const signals = ["SIGINT", "SIGTERM"] as const
  const saved = signals.map((signal) => [signal, process.listeners(signal)] as const)
  const onSignal = () => {
    restore()
    resume(Effect.void)
  }
  const restore = () => {
    for (const [signal, listeners] of saved) {
      process.removeListener(signal, onSignal)
      for (const listener of listeners) {
        if (!process.listeners(signal).includes(listener)) process.on(signal, listener)
      }
    }
  }
  for (const signal of signals) {
    process.removeAllListeners(signal)
    process.on(signal, onSignal)
  }
  return Effect.sync(restore)
})

/** The terminal's output, and Ctrl-C. */
export class ListenIo extends Context.Reference<ListenIo>()("@cobro/server/cli/Listen/ListenIo", {
  defaultValue: (): Io => ({ out: Output.line, err: Output.errorLine, stop: signalled })
}) {}

/** The server refused the stream for a reason a retry cannot fix (the key, the filter). */
class Refused extends Schema.TaggedError<Refused>()("Refused", { message: Schema.String }) {}

/** The stream could not be opened or broke: reconnect. */
class Dropped extends Schema.TaggedError<Dropped>()("Dropped", { message: Schema.String }) {}

const isNotificationType = Schema.is(WebhookDelivery.NotificationType)

/** `--events A,B`: the types, or a usage error naming the valid ones. */
export const parseEvents = (
  text: string
): Effect.Effect<ReadonlyArray<WebhookDelivery.NotificationType>, UserError> => {
  const names = text
    .split(",")
    .map((name) => name.trim().toUpperCase())
    .filter((name) => name !== "")
  const wrong = names.filter((name) => !isNotificationType(name))
  return names.length === 0 || wrong.length > 0
    ? Effect.fail(
        new UserError({
          message: `--events takes notification types separated by commas: ${WebhookDelivery.NotificationType.literals.join(", ")}${wrong.length > 0 ? ` (not ${wrong.join(", ")})` : ""}`
        })
      )
    : Effect.succeed(names as ReadonlyArray<WebhookDelivery.NotificationType>)
}

const httpUrl = (option: string, text: string): Effect.Effect<URL, UserError> => {
  try {
    const url = new URL(text)
    if (url.protocol === "http:" || url.protocol === "https:") return Effect.succeed(url)
  } catch {
    // Answered below.
  }
  return Effect.fail(new UserError({ message: `${option} takes an http:// or https:// URL, not '${text}'` }))
}

/** A failure of `fetch` in one sentence (its cause says more than "fetch failed"). */
const describe = (error: unknown): string => {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause
    if (error.name === "TimeoutError") return "timed out"
    return cause instanceof Error ? `${error.message}: ${cause.message}` : error.message
  }
  return String(error)
}

/** The message of an error envelope, or the text as it came. */
const messageOf = (text: string): string => {
  try {
    const message = JSON.parse(text)?.errors?.[0]?.message
    if (typeof message === "string") return message
  } catch {
    // Not JSON.
  }
  return text.slice(0, 200)
}

/** A notification as the stream carries it. */
const Notification = Schema.Struct({
  id: Schema.String,
  type: Schema.String,
  body: Schema.String,
  headers: Schema.Record({ key: Schema.String, value: Schema.String })
})
type Notification = typeof Notification.Type

/** The `ready` event's data. */
const Ready = Schema.Struct({ merchant_id: Schema.String, signing_secret: Schema.String })

const decodeNotification = Schema.decodeUnknownOption(Schema.parseJson(Notification))
const decodeReady = Schema.decodeUnknownOption(Schema.parseJson(Ready))

/** POSTs a notification to the local URL: its status, or why there is none. */
const forward = (url: URL, notification: Notification): Effect.Effect<string> =>
  Effect.tryPromise({
    try: async (signal) => {
      const response = await fetch(url, {
        method: "POST",
        body: notification.body,
        headers: notification.headers,
        redirect: "manual",
        signal: AbortSignal.any([signal, AbortSignal.timeout(Duration.toMillis(FORWARD_TIMEOUT))])
      })
      await response.arrayBuffer().catch(() => undefined)
      return String(response.status)
    },
    catch: (error) => `failed: ${describe(error)}`
  }).pipe(Effect.merge)

/** Now, as the line printed per notification shows it. */
const timestamp = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis).toISOString())

/**
 * Listens until `Io.stop`: opens the stream, forwards every notification, reconnects after a drop.
 * Fails with a `UserError` when the options are wrong or the server refuses the key or the filter.
 */
export const listen = Effect.fn("Listen.listen")(function* (options: ListenOptions) {
  const io = yield* ListenIo
  const forwardTo = yield* httpUrl("--forward-to", options.forwardTo)
  const base = yield* httpUrl("--api-url", options.apiUrl)
  const streamUrl = new URL(base.href)
  streamUrl.pathname = `${base.pathname.replace(/\/+$/, "")}${PATH}`
  if (Option.isSome(options.events)) streamUrl.searchParams.set("events", options.events.value.join(","))

  let lastEventId: string | undefined = undefined
  let ready = false
  let attempt = 0

  const onEvent = (event: ServerSentEvents.ServerSentEvent): Effect.Effect<void> =>
    Effect.gen(function* () {
      const malformed = io.err(`Ignored a malformed ${event.event} event from the server.`)
      if (event.event === "ready") {
        attempt = 0
        if (!ready) {
          const decoded = decodeReady(event.data)
          if (Option.isNone(decoded)) return yield* malformed
          ready = true
          const data = decoded.value
          const filter = Option.match(options.events, {
            onNone: () => "",
            onSome: (types) => ` (${types.join(", ")} only)`
          })
          yield* io.out(
            `Ready. Signing secret: ${JSON.stringify(data.signing_secret)} (test mode: every test-mode notification is signed with the empty string).`
          )
          yield* io.out(
            `Forwarding ${data.merchant_id}'s test-mode notifications${filter} to ${forwardTo.href}. Ctrl-C to stop.`
          )
        } else yield* io.err("Reconnected; resuming after the last notification received.")
      } else if (event.event === "notification") {
        const decoded = decodeNotification(event.data)
        if (Option.isNone(decoded)) {
          yield* malformed
          lastEventId = event.id
          return
        }
        const notification = decoded.value
        const status = yield* forward(forwardTo, notification)
        yield* io.out(`${yield* timestamp} ${notification.type} ${notification.id} → ${status}`)
      }
      // The position is taken once the event is handled: a drop meanwhile sends it again.
      lastEventId = event.id
    })

  const connect: Effect.Effect<never, Refused | Dropped> = Effect.gen(function* () {
    const response = yield* Effect.tryPromise({
      try: (signal) =>
        fetch(streamUrl, {
          headers: {
            accept: "text/event-stream",
            authorization: `x-api-key ${Redacted.value(options.apiKey)}`,
            ...(lastEventId === undefined ? {} : { "last-event-id": lastEventId })
          },
          signal
        }),
      catch: (error) => new Dropped({ message: `cannot reach ${base.origin}: ${describe(error)}` })
    })
    if (response.status !== 200 || response.body === null) {
      const text = yield* Effect.promise(() => response.text().catch(() => ""))
      const reason = `${response.status} ${messageOf(text)}`
      return yield* [400, 401, 403, 404].includes(response.status)
        ? Effect.fail(new Refused({ message: `${streamUrl.origin}${PATH} answered ${reason}` }))
        : Effect.fail(new Dropped({ message: `the server answered ${reason}` }))
    }
    const body = response.body
    const parse = ServerSentEvents.makeParser()
    yield* Stream.fromReadableStream(
      () => body,
      (error) => new Dropped({ message: `the stream broke: ${describe(error)}` })
    ).pipe(
      Stream.decodeText(),
      Stream.timeoutFail(
        () => new Dropped({ message: `nothing heard for ${Duration.format(SILENCE_TIMEOUT)}` }),
        SILENCE_TIMEOUT
      ),
      Stream.runForEach((text) => Effect.forEach(parse(text), onEvent, { discard: true }))
    )
    return yield* Effect.fail(new Dropped({ message: "the server ended the stream" }))
  })

  const run: Effect.Effect<never, UserError> = connect.pipe(
    Effect.catchTag("Dropped", (dropped) =>
      Effect.gen(function* () {
        const wait = BACKOFF[Math.min(attempt, BACKOFF.length - 1)]!
        attempt++
        yield* io.err(`Connection lost (${dropped.message}); reconnecting in ${Duration.format(wait)}.`)
        yield* Effect.sleep(wait)
        return yield* Effect.fail(dropped)
      })
    ),
    Effect.retry({ while: (error) => error._tag === "Dropped" }),
    Effect.catchTag("Refused", (refused) => Effect.fail(new UserError({ message: refused.message }))),
    // Only `Dropped` is retried, for ever.
    Effect.catchTag("Dropped", () => Effect.die("unreachable"))
  )

  yield* Effect.raceFirst(run, io.stop)
  yield* io.err("Stopped.")
})

/** `cobro listen`. */
export const command = Command.make(
  "listen",
  {
    forwardTo: Options.text("forward-to").pipe(
      Options.withPseudoName("URL"),
      Options.withDescription("the local URL each test-mode notification is POSTed to")
    ),
    apiKey: Options.redacted("api-key").pipe(
      Options.withFallbackConfig(Config.redacted("COBRO_API_KEY")),
      Options.withDescription("a test identity key of the merchant, either integration (env COBRO_API_KEY)")
    ),
    apiUrl: Options.text("api-url").pipe(
      Options.withPseudoName("URL"),
      Options.withFallbackConfig(Config.string("COBRO_API_URL").pipe(Config.withDefault(DEFAULT_API_URL))),
      Options.withDescription(`the Cobro to listen to (env COBRO_API_URL, default ${DEFAULT_API_URL})`)
    ),
    events: Options.text("events").pipe(
      Options.withPseudoName("TYPE,…"),
      Options.optional,
      Options.withDescription(
        `only these notification types: ${WebhookDelivery.NotificationType.literals.join(", ")}`
      )
    )
  },
  ({ apiKey, apiUrl, events, forwardTo }) =>
    Effect.flatMap(
      Option.match(events, {
        onNone: () => Effect.succeed(Option.none<ReadonlyArray<WebhookDelivery.NotificationType>>()),
        onSome: (text) => Effect.map(parseEvents(text), Option.some)
      }),
      (events) => listen({ forwardTo, apiKey, apiUrl, events })
    )
).pipe(
  Command.withDescription(
    "forward the merchant's test-mode notifications to a local URL while it runs, over a stream from Cobro (no public URL needed); prints the signing secret"
  )
)
