/**
 * The webhook dispatcher (spec D, Registration and delivery, Signature, Retries): claims due
 * deliveries from the `DeliveryQueue` in batches, each with its state (one dispatcher at a time per
 * notification), POSTs the exact bytes signed with the merchant's current key, and records every
 * attempt through the WebhookDelivery decider, which schedules the retries (W1) and exhaustion (W3).
 * Attempts answered together are recorded with one append. `run` claims again while earlier claims
 * are in flight, and caps the requests in flight per endpoint, so that a slow endpoint holds back
 * only its own deliveries. Time comes from `Clock`, so a virtual clock drives the retry schedule.
 * With tracing on, each attempt has a span (`Dispatcher.attempt`) linked to the span that scheduled
 * the delivery, and its POST carries the attempt's `traceparent`; each recorded attempt is counted
 * (`DeliveryMetrics`).
 */
import * as CommandHandler from "@cobro/domain/CommandHandler"
import * as DeliveryQueue from "@cobro/domain/DeliveryQueue"
import type * as EventStore from "@cobro/domain/EventStore"
import type * as IdGenerator from "@cobro/domain/IdGenerator"
import type { NotificationId } from "@cobro/domain/Ids"
import * as KeyVault from "@cobro/domain/KeyVault"
import * as Merchant from "@cobro/domain/Merchant"
import * as WebhookDelivery from "@cobro/domain/WebhookDelivery"
import * as WebhookTransport from "@cobro/domain/WebhookTransport"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as DefaultServices from "effect/DefaultServices"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import * as FiberRefs from "effect/FiberRefs"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Runtime from "effect/Runtime"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"
import * as DeliveryMetrics from "./DeliveryMetrics.js"
import * as Signature from "./Signature.js"
import * as TraceContext from "./TraceContext.js"

/** How a dispatcher works. */
export interface Config {
  /** Unique per dispatcher process: the owner of its leases. */
  readonly owner: string
  /** Deliveries claimed at once; default 100. */
  readonly batchSize?: number
  /** Attempts in flight at once; default 32. */
  readonly concurrency?: number
  /** Attempts in flight at once to one endpoint (one URL); default 8. */
  readonly perEndpoint?: number
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
  /** Not due any more (another dispatcher attempted it meanwhile, or it was cancelled). */
  | { readonly _tag: "NotDue" }
  /** The merchant deleted the webhook: the delivery was cancelled, nothing sent (W5). */
  | { readonly _tag: "Cancelled" }
  /** The attempt was made but its report was refused (a concurrent report of the same attempt). */
  | { readonly _tag: "ReportRefused"; readonly reason: string }
  /**
   * Not attempted: the claim's lease would end before the attempt could be sent, answered and
   * recorded, and another dispatcher may take it then. Released, claimed again in a later round.
   */
  | { readonly _tag: "LeaseEnding" }

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
const loadMerchant = CommandHandler.load(Merchant.Merchant)
const handleDeliveries = CommandHandler.makeBatch(WebhookDelivery.WebhookDelivery)

const nowUtc = Effect.map(Clock.currentTimeMillis, (ms) => DateTime.unsafeMake(ms))

const readMerchant = (merchantId: string) => Effect.map(loadMerchant(merchantId), (loaded) => loaded.state)

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

/** A POST to make: a due delivery, its signing secret and the endpoint's choices as registered now. */
interface Planned {
  readonly notificationId: NotificationId
  readonly known: CommandHandler.Known<WebhookDelivery.State>
  readonly state: WebhookDelivery.Existing
  /** `None`: the merchant has not activated the integration; the attempt fails unsent. */
  readonly secret: Option.Option<string>
  readonly standardWebhooks: boolean
  /** The last instant (epoch ms) the POST may start: the claim's lease covers it until then. */
  readonly startBy: number | undefined
  /** The traceparent of the span that scheduled the delivery, which the attempt's span links to. */
  readonly traceparent: string | undefined
}

/** What the plan of a batch found for each claim. */
type Plan =
  | { readonly _tag: "Send"; readonly planned: Planned }
  | { readonly _tag: "Done"; readonly outcome: Outcome }
  | {
      readonly _tag: "Cancel"
      readonly notificationId: NotificationId
      readonly known: CommandHandler.Known<WebhookDelivery.State>
    }

const textEncoder = new TextEncoder()

/**
 * Plans a claimed batch: which deliveries are due and have a webhook for their mode (the others
 * are cancelled, W5), with the merchant's current key (W9) and Standard Webhooks choice (W19). Each
 * merchant is read once and each key opened once for the whole batch (a change made meanwhile is
 * seen by the next batch, as if made while its POSTs were in flight).
 */
const planBatch = Effect.fnUntraced(function* (
  claimed: ReadonlyArray<DeliveryQueue.Claim>,
  startBy: number | undefined
) {
  const now = yield* nowUtc
  const merchants = new Map<string, Merchant.State>()
  for (const { known } of claimed) {
    if (known.state._tag !== "Initial")
      merchants.set(known.state.notification.merchantId, Merchant.initialState)
  }
  for (const merchantId of merchants.keys()) merchants.set(merchantId, yield* readMerchant(merchantId))
  const secrets = new Map<string, string>()
  const vault = yield* KeyVault.KeyVault
  const plans: Array<Plan> = []
  for (const { known, notificationId, traceparent } of claimed) {
    const state = known.state
    if (startBy !== undefined && DateTime.toEpochMillis(now) > startBy) {
      plans.push({ _tag: "Done", outcome: { _tag: "LeaseEnding" } })
      continue
    }
    if (state._tag === "Initial" || !WebhookDelivery.isDue(state, now)) {
      plans.push({ _tag: "Done", outcome: { _tag: "NotDue" } })
      continue
    }
    const notification = state.notification
    const merchant = merchants.get(notification.merchantId)!
    const registered = Merchant.webhookFor(merchant, notification.sandbox ? "test" : "production")
    if (Option.isNone(registered)) {
      plans.push({ _tag: "Cancel", notificationId, known })
      continue
    }
    let secret = Option.some("")
    const key = notification.signingKey
    if (key !== "EMPTY") {
      const pair = Merchant.keyPairFor(merchant, key.integration, key.mode)
      if (Option.isNone(pair)) secret = Option.none()
      else {
        const sealed = pair.value.secretKey
        if (!secrets.has(sealed)) secrets.set(sealed, yield* vault.unseal(sealed))
        secret = Option.some(secrets.get(sealed)!)
      }
    }
    plans.push({
      _tag: "Send",
      planned: {
        notificationId,
        known,
        state,
        secret,
        standardWebhooks: registered.value.standardWebhooks,
        startBy,
        traceparent
      }
    })
  }
  return plans
})

/** The record of a planned attempt, from what the transport answered. */
const sentOf = (planned: Planned, sentAt: number, response: WebhookTransport.WebhookResponse): Sent => ({
  _tag: "Sent",
  notificationId: planned.notificationId,
  // Unchecked (the check costs about 50 µs): every member is made valid here, and the append's
  // encoding checks the events again.
  command: WebhookDelivery.RecordAttempt.make(
    {
      attempt: planned.state.attempts.length + 1,
      result:
        response._tag === "Answered" &&
        Number.isInteger(response.status) &&
        response.status >= 100 &&
        response.status <= 999
          ? { _tag: "Answered", statusCode: response.status, snippet: response.snippet }
          : {
              _tag: "Failed",
              reason: response._tag === "Failed" ? response.reason : `invalid HTTP status ${response.status}`
            },
      latencyMs: Number.isFinite(response.latencyMs) ? Math.max(0, response.latencyMs) : 0,
      now: DateTime.unsafeMake(sentAt),
      ...(response._tag === "Answered" &&
      response.retryAfterMs !== undefined &&
      Number.isFinite(response.retryAfterMs)
        ? { retryAfterMs: Math.max(0, response.retryAfterMs) }
        : {})
    },
    true
  ),
  known: planned.known
})

const unsigned: WebhookTransport.WebhookResponse = {
  _tag: "Failed",
  reason: "no signing key: the merchant has not activated the integration",
  latencyMs: 0
}

/** The outcome of an attempt from what its record came to (a refusal is logged). */
const recordedOutcome = (
  sent: Sent,
  result: CommandHandler.BatchResult<WebhookDelivery.Event, WebhookDelivery.State, WebhookDelivery.Error>
): Effect.Effect<Outcome> =>
  Either.match(result, {
    onRight: (handled) => {
      const status = (handled.state as WebhookDelivery.Existing)._tag
      return Effect.as(
        DeliveryMetrics.recordAttempt(
          DeliveryMetrics.outcomeOf(status, sent.command.result),
          sent.command.attempt
        ),
        { _tag: "Attempted", attempt: sent.command.attempt, status } as Outcome
      )
    },
    onLeft: (error) =>
      Effect.as(
        Effect.logWarning("dispatcher: attempt report refused", error).pipe(
          Effect.annotateLogs({ notificationId: sent.notificationId })
        ),
        { _tag: "ReportRefused", reason: error._tag } as Outcome
      )
  })

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
  )

/** A planned attempt handed to the {@link Sender}, and what to do with its outcome. */
interface Job {
  readonly planned: Planned
  readonly done: (outcome: Outcome) => void
  /**
   * The attempt's span when the caller made it (`attempt`'s own, `Effect.fn`): the sender annotates
   * it and leaves it to its maker to end. Without it, and with tracing on, the sender makes one.
   */
  readonly span?: Tracer.Span | undefined
}

/** The name of an attempt's span. */
export const ATTEMPT_SPAN = "Dispatcher.attempt"

/** Annotates an attempt's span: what it attempts, and the link to the span that scheduled it. */
const annotateAttempt = (span: Tracer.Span, planned: Planned) => {
  span.attribute("cobro.delivery_id", planned.notificationId)
  span.attribute("cobro.notification_type", planned.state.notification.type)
  span.attribute("cobro.attempt", planned.state.attempts.length + 1)
  span.attribute("http.request.method", "POST")
  const link = TraceContext.linkTo(planned.traceparent)
  if (link !== undefined) span.addLinks([link])
}

/** Records an attempt's answer on its span. */
const annotateResponse = (span: Tracer.Span, response: WebhookTransport.WebhookResponse) => {
  if (response._tag === "Answered") span.attribute("http.response.status_code", response.status)
  else span.attribute("cobro.failure_reason", response.reason)
}

/**
 * Sends the POSTs of every batch of a dispatcher and records their attempts. Plain code, not a fiber
 * per attempt: at thousands of attempts a second, the fibers, semaphores and deferreds of an
 * Effect-per-attempt pipeline cost more CPU than the POST itself (`npm run bench -- webhooks`). It
 * keeps at most `concurrency` requests in flight, and at most `perEndpoint` to one URL, starting
 * the first waiting job whose endpoint has room, so that a slow endpoint holds back only its own.
 * Each answer is recorded as soon as the recorder is free, with every other answer waiting then (one
 * append for many). Each POST and each record runs as an effect on the dispatcher's runtime.
 */
class Sender {
  private inFlight = 0
  private readonly perUrl = new Map<string, number>()
  private readonly waiting: Array<Job> = []
  private answered: Array<{ readonly sent: Sent; readonly done: (outcome: Outcome) => void }> = []
  private recording = false
  private readonly concurrency: number
  private readonly perEndpoint: number
  private readonly recordMax: number
  private readonly transport: WebhookTransport.WebhookTransport["Type"]
  /** The runtime's tracer when tracing is on (else no span is made, nor any header sent). */
  private readonly tracer: Tracer.Tracer | undefined
  private readonly timing: boolean
  constructor(
    private readonly runtime: Runtime.Runtime<DispatchServices>,
    /** The dispatcher's clock (a virtual one in tests): when each POST is sent. */
    private readonly clock: Clock.Clock,
    private readonly config: Config
  ) {
    this.transport = Context.get(runtime.context, WebhookTransport.WebhookTransport)
    this.concurrency = config.concurrency ?? 32
    this.perEndpoint = config.perEndpoint ?? 8
    this.recordMax = config.concurrency ?? 32
    const refs = runtime.fiberRefs
    this.tracer = FiberRefs.getOrDefault(refs, FiberRef.currentTracerEnabled)
      ? Context.get(FiberRefs.getOrDefault(refs, DefaultServices.currentServices), Tracer.Tracer)
      : undefined
    this.timing = FiberRefs.getOrDefault(refs, FiberRef.currentTracerTimingEnabled)
  }

  /**
   * The span of a job's attempt, with tracing on: the job's own, or one made here as Effect makes a
   * span (plain code: no fiber per attempt), a child of the span of the runtime's context if any.
   * `owned`: made here, so ended here when the answer comes.
   */
  private spanOf(job: Job): { readonly span: Tracer.Span; readonly owned: boolean } | undefined {
    if (this.tracer === undefined) return undefined
    if (job.span !== undefined) {
      annotateAttempt(job.span, job.planned)
      return { span: job.span, owned: false }
    }
    const parent = Context.getOption(this.runtime.context, Tracer.ParentSpan)
    const span = this.tracer.span(
      ATTEMPT_SPAN,
      parent,
      Context.empty(),
      [],
      this.timing ? this.clock.unsafeCurrentTimeNanos() : BigInt(0),
      "client"
    )
    annotateAttempt(span, job.planned)
    return { span, owned: true }
  }

  submit(jobs: ReadonlyArray<Job>) {
    for (const job of jobs) this.waiting.push(job)
    this.pump()
  }

  /** Drops the jobs not started yet; returns them. */
  withdraw(jobs: ReadonlySet<Job>): Array<Job> {
    const withdrawn: Array<Job> = []
    for (let i = this.waiting.length - 1; i >= 0; i--) {
      if (jobs.has(this.waiting[i]!)) withdrawn.push(...this.waiting.splice(i, 1))
    }
    return withdrawn
  }

  private pump() {
    for (let i = 0; i < this.waiting.length && this.inFlight < this.concurrency;) {
      const job = this.waiting[i]!
      const url = job.planned.state.url
      if ((this.perUrl.get(url) ?? 0) >= this.perEndpoint) {
        i++
        continue
      }
      this.waiting.splice(i, 1)
      this.start(job, url)
    }
  }

  private start(job: Job, url: string) {
    const { planned } = job
    const sentAt = this.clock.unsafeCurrentTimeMillis()
    // The lease may end before this attempt could be answered and recorded: leave it to a later claim.
    if (planned.startBy !== undefined && sentAt > planned.startBy) {
      job.done({ _tag: "LeaseEnding" })
      return
    }
    this.inFlight++
    this.perUrl.set(url, (this.perUrl.get(url) ?? 0) + 1)
    const traced = this.spanOf(job)
    const finish = (response: WebhookTransport.WebhookResponse) => {
      if (traced !== undefined) {
        annotateResponse(traced.span, response)
        if (traced.owned) {
          traced.span.end(
            this.timing ? this.clock.unsafeCurrentTimeNanos() : BigInt(0),
            response._tag === "Answered" ? Exit.void : Exit.fail(response.reason)
          )
        }
      }
      this.inFlight--
      const left = this.perUrl.get(url)! - 1
      if (left === 0) this.perUrl.delete(url)
      else this.perUrl.set(url, left)
      this.answered.push({ sent: sentOf(planned, sentAt, response), done: job.done })
      this.record()
      this.pump()
    }
    if (Option.isNone(planned.secret)) {
      finish(unsigned)
      return
    }
    const bytes = textEncoder.encode(planned.state.notification.body)
    const headers = headersFor(
      planned.state.notification,
      bytes,
      planned.secret.value,
      sentAt,
      planned.standardWebhooks
    )
    // The attempt's own trace context, for the merchant's tracing (W3C Trace Context); none with
    // tracing off. Not signed: the signatures cover the body (and Standard Webhooks' id and time).
    const traceparent = traced === undefined ? undefined : TraceContext.traceparentOf(traced.span)
    if (traceparent !== undefined) headers[TraceContext.HEADER] = traceparent
    const request: WebhookTransport.WebhookRequest = {
      url,
      body: bytes,
      headers,
      timeoutMs: this.config.timeoutMs ?? 2000
    }
    if (this.transport.postCallback !== undefined) {
      this.transport.postCallback(request, finish)
      return
    }
    Runtime.runCallback(this.runtime)(this.transport.post(request), {
      onExit: (exit) =>
        finish(
          Exit.isSuccess(exit)
            ? exit.value
            : { _tag: "Failed", reason: `transport failed: ${Cause.pretty(exit.cause)}`, latencyMs: 0 }
        )
    })
  }

  /** Records the answers waiting, if no record is under way; then those that arrived meanwhile. */
  private record() {
    if (this.recording || this.answered.length === 0) return
    this.recording = true
    const batch = this.answered.slice(0, this.recordMax)
    this.answered = this.answered.slice(batch.length)
    Runtime.runCallback(this.runtime)(recordBatch(batch.map((b) => b.sent)), {
      onExit: (exit) => {
        this.recording = false
        for (const [i, { done }] of batch.entries()) {
          done(
            Exit.isSuccess(exit)
              ? exit.value[i]!
              : { _tag: "ReportRefused", reason: Cause.pretty(exit.cause) }
          )
        }
        if (Exit.isFailure(exit)) {
          Runtime.runFork(this.runtime)(Effect.logError("dispatcher: attempts not recorded", exit.cause))
        }
        this.record()
      }
    })
  }
}

/** What the dispatcher's effects need. */
type DispatchServices =
  | DeliveryQueue.DeliveryQueue
  | EventStore.EventStore
  | IdGenerator.IdGenerator
  | KeyVault.KeyVault
  | WebhookTransport.WebhookTransport

/** A sender on the current runtime. */
const makeSender = (config: Config) =>
  Effect.zipWith(
    Effect.runtime<DispatchServices>(),
    Effect.clock,
    (runtime, clock) => new Sender(runtime, clock, config)
  )

/**
 * Attempts a claimed batch: plans it (one read per merchant), cancels what has no webhook any more
 * (one append), hands the POSTs to the sender and waits for each to be recorded. Returns each
 * claim's outcome, in order. If interrupted, the POSTs not started are withdrawn.
 */
const attemptBatch = (
  claimed: ReadonlyArray<DeliveryQueue.Claim>,
  startBy: number | undefined,
  sender: Sender,
  /** Told of each claim settled (attempted and recorded, or not to be attempted), as it settles. */
  onSettled: (count: number) => void = () => {},
  /** The span of the attempt, when the batch is one attempt that has its own (see {@link Job}). */
  span?: Tracer.Span
) =>
  Effect.gen(function* () {
    const plans = yield* planBatch(claimed, startBy)
    onSettled(plans.filter((plan) => plan._tag === "Done").length)
    const outcomes: Array<Outcome | undefined> = plans.map((plan) =>
      plan._tag === "Done" ? plan.outcome : undefined
    )
    const cancels = plans.flatMap((plan, i) => (plan._tag === "Cancel" ? [{ plan, i }] : []))
    if (cancels.length > 0) {
      const now = yield* nowUtc
      const results = yield* handleDeliveries(
        cancels.map(({ plan }) => ({
          id: plan.notificationId,
          command: new WebhookDelivery.CancelDelivery({ now }),
          metadata: { actor: "dispatcher" },
          known: plan.known
        }))
      )
      for (const [k, { i }] of cancels.entries()) {
        if (Either.isLeft(results[k]!))
          yield* Effect.logWarning("dispatcher: cancel refused", results[k]!.left)
        outcomes[i] = { _tag: "Cancelled" }
      }
      onSettled(cancels.length)
    }
    const sends = plans.flatMap((plan, i) => (plan._tag === "Send" ? [{ planned: plan.planned, i }] : []))
    if (sends.length > 0) {
      yield* Effect.async<void>((resume) => {
        let left = sends.length
        const jobs = new Set<Job>()
        for (const { planned, i } of sends) {
          jobs.add({
            planned,
            done: (outcome) => {
              outcomes[i] = outcome
              onSettled(1)
              if (--left === 0) resume(Effect.void)
            },
            span
          })
        }
        sender.submit([...jobs])
        return Effect.sync(() => {
          sender.withdraw(jobs)
        })
      })
    }
    return outcomes as ReadonlyArray<Outcome>
  })

/**
 * Makes one attempt of a notification if it is due now, reading its stream: checks the merchant
 * still has a webhook for its mode (else cancels, W5), signs the exact body with the current key,
 * POSTs it and records the attempt (its instant is when the POST was sent). With `startBy` (epoch
 * ms, see {@link startDeadline}), nothing is sent after that instant: the claim's lease may end first.
 * Its span is the attempt's: linked to `traceparent` (the span that scheduled the delivery, as the
 * queue stored it), and the POST carries its own traceparent when tracing is on.
 */
export const attempt = Effect.fn("Dispatcher.attempt", { kind: "client" })(function* (
  notificationId: NotificationId,
  config: Config,
  startBy?: number,
  traceparent?: string
) {
  const loaded = yield* loadDelivery(notificationId)
  const sender = yield* makeSender(config)
  const span = yield* Effect.option(Effect.currentSpan)
  const [outcome] = yield* attemptBatch(
    [{ notificationId, known: { state: loaded.state, version: loaded.version }, traceparent }],
    startBy,
    sender,
    undefined,
    Option.getOrUndefined(span)
  )
  return outcome!
})

/** Claims what is due now, up to `limit`; dies if the lease cannot cover an attempt. */
const claimDue = (config: Config, limit: number) =>
  Effect.gen(function* () {
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
    const claimed = yield* queue.claim({ now, limit, lease, owner: config.owner })
    return { claimed, startBy }
  })

/** The outcomes whose claims a batch gives back: nothing recorded moved their streams on. */
const releasable: ReadonlySet<Outcome["_tag"]> = new Set(["LeaseEnding", "ReportRefused"])

/**
 * Attempts a claimed batch to its end, then gives back the claims it did not attempt or could not
 * record; if interrupted or if it dies, gives back every claim at once rather than holding them
 * for the lease (the recorded ones' leases have ended already).
 */
const dispatchBatch = (
  claimed: ReadonlyArray<DeliveryQueue.Claim>,
  config: Config,
  startBy: number,
  sender: Sender,
  onSettled?: (count: number) => void
) =>
  Effect.flatMap(DeliveryQueue.DeliveryQueue, (queue) =>
    attemptBatch(claimed, startBy, sender, onSettled).pipe(
      Effect.flatMap((outcomes) =>
        queue.releaseAll(
          // Not attempted, or attempted and not recorded (the database lost): due again now.
          claimed.flatMap((c, i) => (releasable.has(outcomes[i]!._tag) ? [c.notificationId] : [])),
          config.owner
        )
      ),
      Effect.onError(() =>
        queue.releaseAll(
          claimed.map((c) => c.notificationId),
          config.owner
        )
      ),
      Effect.catchAllDefect((defect) => Effect.logError("dispatcher: batch failed", defect))
    )
  )

/**
 * One round: claim what is due now (with each delivery's state), attempt each while the claim's
 * lease covers an attempt, each recorded as soon as it is answered, together with the others
 * answered meanwhile; give back the claims not attempted. Returns how many were claimed.
 */
export const runOnce = Effect.fn("Dispatcher.runOnce")(function* (config: Config) {
  const { claimed, startBy } = yield* claimDue(config, config.batchSize ?? 100)
  if (claimed.length === 0) return 0
  yield* dispatchBatch(claimed, config, startBy, yield* makeSender(config))
  return claimed.length
})

/** The first sleep after a round that found work and the next found none. */
export const MIN_PAUSE = Duration.millis(25)

/**
 * The dispatcher for ever. It claims a batch and attempts it in the background, and claims again at
 * once while claims find work and at most twice `concurrency` attempts wait: a slow endpoint's
 * attempts hold their own endpoint's slots, never the next claim. After a claim that found nothing
 * it sleeps {@link MIN_PAUSE}, doubling up to `pollInterval` while claims stay empty, until
 * `wakeups` signals (work committed) or a batch is done: then it claims again at once.
 */
export const run = (config: Config) =>
  Effect.scoped(
    Effect.gen(function* () {
      const longest = Duration.decode(config.pollInterval ?? Duration.seconds(1))
      const batchSize = config.batchSize ?? 100
      const concurrency = config.concurrency ?? 32
      const woken = yield* Queue.sliding<void>(1)
      const settled = yield* Queue.sliding<void>(1)
      // A batch done: what became due meanwhile (and no wake-up announced) is claimed at once.
      const batchDone = yield* Queue.sliding<void>(1)
      if (config.wakeups !== undefined) {
        yield* config.wakeups.pipe(
          Stream.runForEach(() => Queue.offer(woken, undefined)),
          Effect.forkScoped
        )
      }
      const sender = yield* makeSender(config)
      // Claimed and not yet settled (in flight or waiting for a slot).
      let outstanding = 0
      let pause = Duration.min(MIN_PAUSE, longest)
      while (true) {
        // Enough waiting for a slot: claim again once some have settled.
        while (outstanding > 2 * concurrency) yield* Queue.take(settled)
        yield* Queue.takeAll(woken)
        const { claimed, startBy } = yield* claimDue(config, batchSize)
        if (claimed.length > 0) {
          // Each claim settles on its own, so that the next claim overlaps this batch's slowest
          // attempts; whatever an interruption or a defect left unsettled is settled at its end.
          let unsettled = claimed.length
          outstanding += unsettled
          const settle = (count: number) => {
            unsettled -= count
            outstanding -= count
            settled.unsafeOffer(undefined)
          }
          yield* Effect.forkScoped(
            Effect.ensuring(
              dispatchBatch(claimed, config, startBy, sender, settle),
              Effect.zipRight(
                Effect.sync(() => settle(unsettled)),
                Queue.offer(batchDone, undefined)
              )
            )
          )
          pause = Duration.min(MIN_PAUSE, longest)
          continue
        }
        const signalled = yield* Effect.raceAll([
          Effect.as(Effect.sleep(pause), false),
          Effect.as(Queue.take(woken), true),
          Effect.as(Queue.take(batchDone), true)
        ])
        pause = signalled ? Duration.min(MIN_PAUSE, longest) : Duration.min(Duration.times(pause, 2), longest)
      }
    })
  )
