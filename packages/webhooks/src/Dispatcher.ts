/**
 * The webhook dispatcher (spec D, Registration and delivery, Signature, Retries): claims due
 * deliveries from the `DeliveryQueue` (one dispatcher at a time per notification), POSTs the exact
 * bytes signed with the merchant's current key, and records every attempt through the
 * WebhookDelivery decider, which schedules the retries (W1) and exhaustion (W3). A round records
 * the attempts answered together in one append and gives its claims back in one write. Time comes from
 * `Clock`, so a virtual clock drives the retry schedule.
 */
import * as CommandHandler from "@cobro/domain/CommandHandler"
import * as DeliveryQueue from "@cobro/domain/DeliveryQueue"
import type * as EventStore from "@cobro/domain/EventStore"
import type { NotificationId } from "@cobro/domain/Ids"
import * as KeyVault from "@cobro/domain/KeyVault"
import * as Merchant from "@cobro/domain/Merchant"
import * as WebhookDelivery from "@cobro/domain/WebhookDelivery"
import * as WebhookTransport from "@cobro/domain/WebhookTransport"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as DateTime from "effect/DateTime"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as Signature from "./Signature.js"

/** How a dispatcher works. */
export interface Config {
  /** Unique per dispatcher process: the owner of its leases. */
  readonly owner: string
  /** Deliveries claimed at once; default 100. */
  readonly batchSize?: number
  /** Attempts in flight at once; default 32. */
  readonly concurrency?: number
  /**
   * How long a claim holds if the process dies; default 30 seconds. It must outlast an attempt
   * (`timeoutMs` plus {@link REPORT_MARGIN_MILLIS}): an attempt starts only while the lease covers it.
   */
  readonly lease?: Duration.DurationInput
  /**
   * The longest sleep after a round that found nothing due; default 1 second. Right after a round
   * that found work the sleep is {@link MIN_PAUSE}, doubling with each empty round up to this.
   */
  readonly pollInterval?: Duration.DurationInput
  /**
   * Signals that work may have become due (the log's wake-ups, `LogNotifications` on PostgreSQL): a
   * sleeping dispatcher claims again at once, then backs off from {@link MIN_PAUSE} again.
   */
  readonly wakeups?: Stream.Stream<unknown>
  /** Answer time allowed; default the spec's 2 seconds. */
  readonly timeoutMs?: number
}

/** What one attempt of the dispatcher did. */
export type Outcome =
  | {
      readonly _tag: "Attempted"
      readonly attempt: number
      readonly status: WebhookDelivery.Status
    }
  /**
   * Not due any more (another dispatcher attempted it, or the queue lagged behind the stream);
   * `attemptsRecorded` is how many attempts the stream records.
   */
  | { readonly _tag: "NotDue"; readonly attemptsRecorded: number }
  /** The merchant deleted the webhook: the delivery was cancelled, nothing sent (W5). */
  | { readonly _tag: "Cancelled" }
  /** The attempt was made but its report was refused (a concurrent report of the same attempt). */
  | { readonly _tag: "ReportRefused"; readonly reason: string }
  /**
   * Not attempted: the claim's lease would end before the attempt could be sent, answered and
   * recorded, and another dispatcher may take it then. Released, claimed again in a later round.
   */
  | { readonly _tag: "LeaseEnding" }

/**
 * How many attempts the stream records after an outcome, when known: the queue keeps the delivery
 * back until its view has caught up with them (`DeliveryQueue.ReleaseOptions`).
 */
export const attemptsRecorded = (outcome: Outcome): number | undefined =>
  outcome._tag === "Attempted"
    ? outcome.attempt
    : outcome._tag === "NotDue"
      ? outcome.attemptsRecorded
      : undefined

/** The default lease of a claim. */
export const DEFAULT_LEASE = Duration.seconds(30)

/**
 * Time kept, within a lease, for recording an attempt after its answer time: an attempt starts
 * only if its lease still covers `timeoutMs` plus this. One dispatcher at a time attempts a
 * notification only while each lease outlasts the attempt it covers.
 */
export const REPORT_MARGIN_MILLIS = 1_000

/** The last instant (epoch ms) at which a delivery claimed at `claimedAtMillis` may start an attempt. */
export const startDeadline = (claimedAtMillis: number, config: Config): number =>
  claimedAtMillis +
  Duration.toMillis(Duration.decode(config.lease ?? DEFAULT_LEASE)) -
  (config.timeoutMs ?? 2000) -
  REPORT_MARGIN_MILLIS

const loadDelivery = CommandHandler.load(WebhookDelivery.WebhookDelivery)
const loadDeliveries = CommandHandler.loadMany(WebhookDelivery.WebhookDelivery)
const loadMerchant = CommandHandler.load(Merchant.Merchant)
const handleDelivery = CommandHandler.make(WebhookDelivery.WebhookDelivery)
const handleDeliveries = CommandHandler.makeBatch(WebhookDelivery.WebhookDelivery)

const nowUtc = Effect.map(Clock.currentTimeMillis, (ms) => DateTime.unsafeMake(ms))

/** Reads a merchant; a round passes one that reads each merchant once (see {@link runOnce}). */
export type MerchantReader = (
  merchantId: string
) => Effect.Effect<Merchant.State, never, EventStore.EventStore>

const readMerchant: MerchantReader = (merchantId) =>
  Effect.map(loadMerchant(merchantId), (loaded) => loaded.state)

/**
 * A reader that reads each merchant once and then answers from memory: a round's attempts share
 * it, so that a batch of one merchant's notifications reads its stream once. A change made during
 * the round (a webhook deleted, a key rotated) is seen by the next round, as if it had been made
 * while the round's POSTs were in flight.
 */
export const merchantsOnce: Effect.Effect<MerchantReader> = Effect.cachedFunction(readMerchant)

/** The secret that signs a delivery now: the empty string for sandbox, else the merchant's current key (W9). */
const secretFor = (merchant: Merchant.State, key: WebhookDelivery.Notification["signingKey"]) =>
  Effect.gen(function* () {
    if (key === "EMPTY") return Option.some("")
    const pair = Merchant.keyPairFor(merchant, key.integration, key.mode)
    if (Option.isNone(pair)) return Option.none<string>()
    const vault = yield* KeyVault.KeyVault
    return Option.some(yield* vault.unseal(pair.value.secretKey))
  })

/** The headers of an attempt. */
export const headersFor = (
  notification: WebhookDelivery.Notification,
  bytes: Uint8Array,
  secret: string,
  nowMillis: number,
  standardWebhooks: boolean
): Record<string, string> => ({
  "content-type": "application/json",
  "user-agent": "Cobro-Webhooks/1",
  [Signature.HEADER]: Signature.sign(bytes, secret),
  ...(standardWebhooks
    ? Signature.standardWebhookHeaders(notification.notificationId, nowMillis / 1000, bytes, secret)
    : {})
})

/** An attempt sent (or failed before sending), to be recorded on the state read before it. */
interface Sent {
  readonly _tag: "Sent"
  readonly notificationId: NotificationId
  readonly command: WebhookDelivery.RecordAttempt
  /** The state read before the POST: a concurrent write turns the record into a conflict, then a re-read. */
  readonly known: CommandHandler.Known<WebhookDelivery.State>
}

/**
 * An attempt up to its record: checks it is due and the merchant still has a webhook for its mode
 * (else cancels, W5), signs the exact body with the current key and POSTs it. Returns the attempt to
 * record, or the outcome when nothing was sent.
 */
const send = Effect.fnUntraced(function* (
  notificationId: NotificationId,
  config: Config,
  startBy: number | undefined,
  merchants: MerchantReader,
  /** The delivery as the round read it with the others' (`loadDeliveries`); else read here. */
  loaded?: CommandHandler.Known<WebhookDelivery.State>
) {
  const leaseEnding = (at: DateTime.Utc) => startBy !== undefined && DateTime.toEpochMillis(at) > startBy
  // Checked before the reads (cheap) and again just before the POST.
  if (leaseEnding(yield* nowUtc)) return { _tag: "LeaseEnding" } as Outcome | Sent
  const { state, version } = loaded ?? (yield* loadDelivery(notificationId))
  const now = yield* nowUtc
  if (state._tag === "Initial" || !WebhookDelivery.isDue(state, now))
    return {
      _tag: "NotDue",
      attemptsRecorded: state._tag === "Initial" ? 0 : state.attempts.length
    } as Outcome | Sent
  const notification = state.notification
  const merchant = yield* merchants(notification.merchantId)
  const registered = Merchant.webhookFor(merchant, notification.sandbox ? "test" : "production")
  if (Option.isNone(registered)) {
    yield* handleDelivery(
      notificationId,
      new WebhookDelivery.CancelDelivery({ now }),
      { actor: "dispatcher" },
      { state, version }
    ).pipe(Effect.catchAll((error) => Effect.logWarning("dispatcher: cancel refused", error)))
    return { _tag: "Cancelled" } as Outcome | Sent
  }
  const secret = yield* secretFor(merchant, notification.signingKey)
  const bytes = new TextEncoder().encode(notification.body)
  const number = state.attempts.length + 1
  const sentAt = yield* nowUtc
  if (leaseEnding(sentAt)) return { _tag: "LeaseEnding" } as Outcome | Sent
  const response: WebhookTransport.WebhookResponse = Option.isNone(secret)
    ? {
        _tag: "Failed",
        reason: "no signing key: the merchant has not activated the integration",
        latencyMs: 0
      }
    : yield* Effect.flatMap(WebhookTransport.WebhookTransport, (transport) =>
        transport.post({
          url: state.url,
          body: bytes,
          headers: headersFor(
            notification,
            bytes,
            secret.value,
            DateTime.toEpochMillis(sentAt),
            // The endpoint's own choice, as registered now (W19), like the key that signs (W9).
            registered.value.standardWebhooks
          ),
          timeoutMs: config.timeoutMs ?? 2000
        })
      )
  const result: WebhookDelivery.AttemptResult =
    response._tag === "Answered"
      ? { _tag: "Answered", statusCode: response.status, snippet: response.snippet }
      : { _tag: "Failed", reason: response.reason }
  return {
    _tag: "Sent",
    notificationId,
    command: new WebhookDelivery.RecordAttempt({
      attempt: number,
      result,
      latencyMs: Math.max(0, response.latencyMs),
      now: sentAt
    }),
    known: { state, version }
  } as Outcome | Sent
})

/** The outcome of an attempt from what its record came to (a refusal is logged). */
const recordedOutcome = (
  sent: Sent,
  result: CommandHandler.BatchResult<WebhookDelivery.Event, WebhookDelivery.State, WebhookDelivery.Error>
): Effect.Effect<Outcome> =>
  Either.match(result, {
    onRight: (handled) =>
      Effect.succeed<Outcome>({
        _tag: "Attempted",
        attempt: sent.command.attempt,
        status: (handled.state as WebhookDelivery.Existing)._tag
      }),
    onLeft: (error) =>
      Effect.as(
        Effect.logWarning("dispatcher: attempt report refused", error).pipe(
          Effect.annotateLogs({ notificationId: sent.notificationId })
        ),
        { _tag: "ReportRefused", reason: error._tag } as Outcome
      )
  })

/** Records one attempt alone. */
const recordOne = (sent: Sent) =>
  Effect.flatMap(
    Effect.either(handleDelivery(sent.notificationId, sent.command, { actor: "dispatcher" }, sent.known)),
    (result) => recordedOutcome(sent, result)
  )

/**
 * Records attempts together, with one `appendBatch` (falling back to one append each if it fails).
 * A defect fails every attempt of the batch.
 */
const recordBatch = (sents: ReadonlyArray<Sent>) =>
  Effect.flatMap(
    handleDeliveries(
      sents.map((sent) => ({
        id: sent.notificationId,
        command: sent.command,
        metadata: { actor: "dispatcher" },
        known: sent.known
      }))
    ),
    (results) => Effect.forEach(sents, (sent, i) => recordedOutcome(sent, results[i]!))
  ).pipe(Effect.withSpan("Dispatcher.record", { attributes: { attempts: sents.length } }))

/**
 * A recorder for a round (scoped): `record(sent)` hands an attempt to a fiber that records the
 * attempts waiting, up to `max` of them, with one append as soon as it is free, and waits for its
 * outcome. Under load many attempts share an append; none waits for the end of the round, so that
 * its lease still covers its record.
 */
const makeRecorder = (max: number) =>
  Effect.gen(function* () {
    const queue = yield* Queue.unbounded<{ readonly sent: Sent; readonly done: Deferred.Deferred<Outcome> }>()
    yield* Effect.addFinalizer(() => Queue.shutdown(queue))
    const drain = Effect.gen(function* () {
      const batch = Chunk.toReadonlyArray(yield* Queue.takeBetween(queue, 1, max))
      const exit = yield* Effect.exit(recordBatch(batch.map((b) => b.sent)))
      for (const [i, { done }] of batch.entries()) {
        yield* Exit.match(exit, {
          onSuccess: (outcomes) => Deferred.succeed(done, outcomes[i]!),
          onFailure: (cause) => Deferred.failCause(done, cause)
        })
      }
    })
    yield* Effect.forkScoped(Effect.forever(drain))
    return (sent: Sent): Effect.Effect<Outcome> =>
      Effect.flatMap(Deferred.make<Outcome>(), (done) =>
        Effect.zipRight(Queue.offer(queue, { sent, done }), Deferred.await(done))
      )
  })

/**
 * Makes one attempt of a notification if it is due now: checks the merchant still has a webhook
 * for its mode (else cancels, W5), signs the exact body with the current key, POSTs it and records
 * the attempt (its instant is when the POST was sent). With `startBy` (epoch ms, see
 * {@link startDeadline}), nothing is sent after that instant: the claim's lease may end first.
 */
export const attempt = Effect.fn("Dispatcher.attempt")(function* (
  notificationId: NotificationId,
  config: Config,
  startBy?: number,
  merchants: MerchantReader = readMerchant
) {
  const sent = yield* send(notificationId, config, startBy, merchants)
  return sent._tag === "Sent" ? yield* recordOne(sent) : sent
})

/**
 * One round: claim what is due now, attempt each (bounded concurrency) while the claim's lease
 * covers an attempt, each attempt recorded as soon as it is answered, together with the others
 * answered meanwhile (one append for many); then give every claim back with one write (an attempt
 * skipped is claimed again by a later round). A released claim tells the queue how many attempts
 * the stream records, so that a queue whose view lags behind the log does not hand the notification
 * out again before it has caught up. Each merchant is read once per round. Returns how many were
 * claimed.
 */
export const runOnce = Effect.fn("Dispatcher.runOnce")(function* (config: Config) {
  const queue = yield* DeliveryQueue.DeliveryQueue
  const lease = Duration.decode(config.lease ?? DEFAULT_LEASE)
  const now = yield* nowUtc
  const startBy = startDeadline(DateTime.toEpochMillis(now), config)
  if (startBy < DateTime.toEpochMillis(now)) {
    return yield* Effect.dieMessage(
      `Dispatcher: a lease of ${Duration.format(lease)} cannot cover an attempt ` +
        `(${config.timeoutMs ?? 2000} ms answer time + ${REPORT_MARGIN_MILLIS} ms to record it)`
    )
  }
  const claimed = yield* queue.claim({ now, limit: config.batchSize ?? 100, lease, owner: config.owner })
  if (claimed.length === 0) return 0
  // Every claimed delivery with one read. A write between this read and an attempt's record (an
  // admin's re-send or cancel) makes that record conflict, and it is decided again on a re-read.
  const loaded = yield* loadDeliveries(claimed)
  const merchants = yield* merchantsOnce
  const concurrency = config.concurrency ?? 32
  // How many attempts each stream records after its attempt, once known.
  const recorded = new Map<NotificationId, number>()
  const releases = () =>
    claimed.map((notificationId): DeliveryQueue.Release => {
      const attempts = recorded.get(notificationId)
      return attempts === undefined ? { notificationId } : { notificationId, attemptsRecorded: attempts }
    })
  yield* Effect.scoped(
    Effect.gen(function* () {
      const record = yield* makeRecorder(concurrency)
      yield* Effect.forEach(
        claimed,
        (id) =>
          send(id, config, startBy, merchants, loaded.get(id)).pipe(
            Effect.flatMap((sent) => (sent._tag === "Sent" ? record(sent) : Effect.succeed(sent))),
            Effect.withSpan("Dispatcher.attempt"),
            Effect.map((outcome) => {
              const attempts = attemptsRecorded(outcome)
              if (attempts !== undefined) recorded.set(id, attempts)
            }),
            Effect.catchAllDefect((defect) =>
              Effect.logError("dispatcher: attempt failed", defect).pipe(
                Effect.annotateLogs({ notificationId: id })
              )
            )
          ),
        { concurrency, discard: true }
      )
    })
  ).pipe(Effect.onInterrupt(() => queue.releaseAll(releases(), config.owner)))
  yield* queue.releaseAll(releases(), config.owner)
  return claimed.length
})

/** The first sleep after a round that found work and the next found none. */
export const MIN_PAUSE = Duration.millis(25)

/**
 * The dispatcher for ever: rounds back to back while a round finds work. A round that claimed less
 * than a full batch does not sleep: while notifications keep arriving (each round takes what became
 * due during the previous one), sleeping after each partial batch would idle the dispatcher most of
 * the time (`npm run bench -- webhooks`). After an empty round it sleeps {@link MIN_PAUSE}, doubling
 * up to `pollInterval` while rounds stay empty, or until `wakeups` signals: the read model of due
 * deliveries trails the log by a moment, so work that a wake-up announces may take a few short
 * sleeps to become claimable, while an idle dispatcher soon polls only once per `pollInterval`.
 */
export const run = (config: Config) =>
  Effect.scoped(
    Effect.gen(function* () {
      const longest = Duration.decode(config.pollInterval ?? Duration.seconds(1))
      const woken = yield* Queue.sliding<void>(1)
      if (config.wakeups !== undefined) {
        yield* config.wakeups.pipe(
          Stream.runForEach(() => Queue.offer(woken, undefined)),
          Effect.forkScoped
        )
      }
      let pause = Duration.min(MIN_PAUSE, longest)
      while (true) {
        yield* Queue.takeAll(woken)
        const claimed = yield* runOnce(config)
        if (claimed > 0) {
          pause = Duration.min(MIN_PAUSE, longest)
          continue
        }
        const signalled = yield* Effect.raceFirst(
          Effect.as(Effect.sleep(pause), false),
          Effect.as(Queue.take(woken), true)
        )
        pause = signalled ? Duration.min(MIN_PAUSE, longest) : Duration.min(Duration.times(pause, 2), longest)
      }
    })
  )
