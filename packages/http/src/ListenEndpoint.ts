/**
 * `GET /dev/v1/listen` (`cobro listen`): the authenticated merchant's test-mode notifications as
 * Server-Sent Events, each as a delivery attempt would send it (exact body, the dispatcher's
 * headers), from the moment the stream opens (or after `Last-Event-ID`) for as long as it stays open.
 * A raw route beside the `HttpApi` contract, so the OpenAPI document does not change. The open
 * stream is the registration: nothing about the merchant is stored, so nothing is left to undo when
 * it closes (spec-decisions, "cobro listen").
 *
 * Auth: `Authorization: x-api-key <test identity key>` of either integration; a production key is
 * 403, a missing or unknown key 401, in the spec's error envelope. Frames: first `event: ready` with
 * `{merchant_id, signing_secret, mode: "test"}`, then `event: notification` with
 * `{id, type, body, headers}`, a comment every {@link HEARTBEAT}. Each event's `id:` is the feed's
 * position (`<xid>.<position>`), so a client that reconnects with `Last-Event-ID` misses nothing and
 * receives nothing twice, even when it dropped before the first notification.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as EventStore from "@cobro/domain/EventStore"
import type * as KeyVault from "@cobro/domain/KeyVault"
import * as ListenFeed from "@cobro/domain/ListenFeed"
import type * as MerchantDirectory from "@cobro/domain/MerchantDirectory"
import * as WebhookDelivery from "@cobro/domain/WebhookDelivery"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Errors from "@cobro/api/Errors"
import * as Authentication from "./Authentication.js"

/** Where the route is served. */
export const PATH = "/dev/v1/listen"

/** How often an open stream reads the feed. */
export const POLL_INTERVAL = Duration.millis(250)

/** How often an idle stream sends a comment, so that proxies and the client see it alive. */
export const HEARTBEAT = Duration.seconds(15)

/** The most notifications one read of the feed takes. */
export const BATCH_SIZE = 100

/** The event id of a position: `<xid>.<global position>`. */
export const cursorText = (position: EventStore.Checkpoint): string =>
  `${position.transactionId}.${position.globalPosition}`

/** The position of an event id, if it is one {@link cursorText} wrote. */
export const parseCursor = (text: string): Option.Option<EventStore.Checkpoint> => {
  const match = /^(\d{1,20})\.(\d{1,20})$/.exec(text.trim())
  return match === null
    ? Option.none()
    : Option.some({ transactionId: BigInt(match[1]!), globalPosition: BigInt(match[2]!) })
}

const isNotificationType = Schema.is(WebhookDelivery.NotificationType)

/** The `events` filter of a query string: none when absent; a 400 naming `events` when malformed. */
export const typesOf = (
  search: URLSearchParams
): Effect.Effect<ReadonlyArray<WebhookDelivery.NotificationType> | undefined, Errors.BadRequest> => {
  const values = search.getAll("events")
  if (values.length === 0) return Effect.succeed(undefined)
  const names = values.flatMap((value) => value.split(",")).map((name) => name.trim())
  const wrong = names.filter((name) => !isNotificationType(name))
  return names.length === 0 || wrong.length > 0
    ? Effect.fail(
        Errors.BadRequest.of(
          Errors.Codes.ValidationError,
          `events: a comma-separated list of ${WebhookDelivery.NotificationType.literals.join(", ")}`,
          "events"
        )
      )
    : Effect.succeed([...new Set(names as ReadonlyArray<WebhookDelivery.NotificationType>)])
}

/** One SSE frame; `data` is one line of JSON. */
const frame = (event: string, id: string | undefined, data: unknown): string =>
  `event: ${event}\n${id === undefined ? "" : `id: ${id}\n`}data: ${JSON.stringify(data)}\n\n`

const encoder = new TextEncoder()

/** The `ready` frame's data: what the listener prints. */
export interface Ready {
  readonly merchant_id: string
  readonly signing_secret: string
  readonly mode: "test"
}

/** The `notification` frame's data. */
export interface Notification {
  readonly id: string
  readonly type: string
  readonly body: string
  readonly headers: Readonly<Record<string, string>>
}

/** The frames of the feed after `start`: read every {@link POLL_INTERVAL} while nothing more is there. */
const notifications = (
  feed: ListenFeed.ListenFeed["Type"],
  query: Omit<ListenFeed.Query, "after" | "limit">,
  start: EventStore.Checkpoint
): Stream.Stream<string> =>
  Stream.paginateChunkEffect({ after: start, wait: false }, ({ after, wait }) =>
    Effect.zipRight(
      wait ? Effect.sleep(POLL_INTERVAL) : Effect.void,
      Effect.map(
        feed.since({ ...query, after, limit: BATCH_SIZE }),
        (
          batch
        ): readonly [Chunk.Chunk<string>, Option.Option<{ after: EventStore.Checkpoint; wait: boolean }>] => [
          Chunk.fromIterable(
            batch.items.map((item) =>
              frame("notification", cursorText(item.position), {
                id: item.notificationId,
                type: item.type,
                body: item.body,
                headers: item.headers
              } satisfies Notification)
            )
          ),
          Option.some({ after: batch.cursor, wait: batch.items.length < BATCH_SIZE })
        ]
      )
    )
  )

/**
 * The whole event stream of one listener, until `closing` (the server shuts down: an open stream
 * must not hold the graceful shutdown for its grace period; the client resumes elsewhere).
 */
const events = (
  feed: ListenFeed.ListenFeed["Type"],
  query: Omit<ListenFeed.Query, "after" | "limit">,
  start: EventStore.Checkpoint,
  closing: Effect.Effect<void>
): Stream.Stream<Uint8Array> =>
  Stream.make(
    frame("ready", cursorText(start), {
      merchant_id: query.merchantId,
      signing_secret: ListenFeed.TEST_SIGNING_SECRET,
      mode: "test"
    } satisfies Ready)
  ).pipe(
    Stream.concat(
      Stream.merge(
        notifications(feed, query, start),
        Stream.fromSchedule(Schedule.spaced(HEARTBEAT)).pipe(Stream.as(": heartbeat\n\n")),
        { haltStrategy: "left" }
      )
    ),
    // The database failed: the stream ends, and the client resumes from its last event id.
    Stream.catchAllCause((cause) =>
      Stream.fromEffect(Effect.logWarning("listen: the feed failed; the stream ends", cause)).pipe(
        Stream.drain
      )
    ),
    Stream.interruptWhen(closing),
    Stream.map((text) => encoder.encode(text))
  )

type Services = KeyVault.KeyVault | MerchantDirectory.MerchantDirectory

/** Answers one request with `feed`. */
const respond = (feed: ListenFeed.ListenFeed["Type"], closing: Effect.Effect<void>) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const credential = yield* Authentication.authenticate(request.headers["authorization"] ?? "", undefined)
    if (credential.mode !== "test") {
      return yield* Effect.fail(
        Errors.Forbidden.of("listen takes a test key: it streams test-mode notifications only")
      )
    }
    const search = new URL(request.url, "http://cobro.invalid").searchParams
    const types = yield* typesOf(search)
    const lastEventId = request.headers["last-event-id"]
    const start =
      lastEventId === undefined || lastEventId === ""
        ? yield* feed.now
        : yield* Option.match(parseCursor(lastEventId), {
            onNone: () =>
              Effect.fail(
                Errors.BadRequest.of(
                  Errors.Codes.ValidationError,
                  "Last-Event-ID: an event id this stream sent",
                  "Last-Event-ID"
                )
              ),
            onSome: Effect.succeed
          })
    return HttpServerResponse.stream(
      events(feed, { merchantId: credential.merchantId, types }, start, closing),
      {
        contentType: "text/event-stream",
        headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
      }
    )
  }).pipe(Effect.catchIf(Errors.isEnvelopeError, (error) => Effect.succeed(Errors.toResponse(error))))

/**
 * The route on the API's router. Without a `ListenFeed` in context (an app built without the
 * server's ports) it answers 404, as an unknown path does.
 */
export const layer: Layer.Layer<never, never, Services> = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const feed = yield* Effect.serviceOption(ListenFeed.ListenFeed)
    const context = yield* Effect.context<Services>()
    // Released before the HTTP server closes its connections (it is built on this layer's routes).
    const closing = yield* Deferred.make<void>()
    yield* Effect.addFinalizer(() => Deferred.succeed(closing, undefined))
    yield* router.get(
      PATH,
      Option.match(feed, {
        onNone: () =>
          Effect.succeed(
            Errors.toResponse(Errors.NotFound.of(Errors.Codes.NotFound, `no route for GET ${PATH}`))
          ),
        onSome: (feed) => Effect.provide(respond(feed, Deferred.await(closing)), context)
      })
    )
  })
)
