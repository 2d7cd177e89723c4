import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import { fold } from "@cobro/domain/Decider"
import { MerchantId, NotificationId, TransactionId } from "@cobro/domain/Ids"
import * as SigningKey from "@cobro/domain/SigningKey"
import * as Transitions from "@cobro/domain/Transitions"
import * as WebhookDelivery from "@cobro/domain/WebhookDelivery"
import { DeciderSpec, openedBy } from "../support/DeciderSpec.js"
import { transitionProperties } from "../support/TransitionProperties.js"

const T0 = Date.UTC(2026, 10, 21, 15, 0, 0)
const at = (minutes: number) => DateTime.unsafeMake(T0 + minutes * 60_000)
const notificationId = NotificationId.make("00000000-0000-4000-8000-000000000001")
const url = "https://merchant.example/webhooks"
const body = '{"id":"00000000-0000-4000-8000-000000000001","type":"SALE_APPROVED"}'
const key: SigningKey.SigningKey = { integration: "terminal_api", mode: "production" }

/** The notification of these tests: what scheduling it takes, and what its DeliveryScheduled records. */
const notification = {
  notificationId,
  merchantId: MerchantId.make("MER_1"),
  url,
  type: "SALE_APPROVED",
  subject: TransactionId.make("TRX_1"),
  body,
  signingKey: key,
  sandbox: false
} as const

const schedule = (
  overrides: Partial<ConstructorParameters<typeof WebhookDelivery.ScheduleDelivery>[0]> = {}
) => new WebhookDelivery.ScheduleDelivery({ ...notification, now: at(0), ...overrides })

const scheduled = () => openedBy(WebhookDelivery.WebhookDelivery, schedule())

const answered = (statusCode: number, snippet = ""): WebhookDelivery.AttemptResult => ({
  _tag: "Answered",
  statusCode,
  snippet
})
const failed = (reason: string): WebhookDelivery.AttemptResult => ({ _tag: "Failed", reason })

const attempt = (n: number, minutes: number, result = answered(500), latencyMs = 120) =>
  new WebhookDelivery.RecordAttempt({ attempt: n, result, latencyMs, now: at(minutes) })

/** The event `decide` records for a failed attempt `n` made at `minutes`, next due at `due`. */
const failure = (n: number, minutes: number, due: number | undefined, result = answered(500)) =>
  new WebhookDelivery.AttemptFailed({
    attempt: n,
    at: at(minutes),
    outcome:
      result._tag === "Answered"
        ? { _tag: "Answered", statusCode: result.statusCode, snippet: result.snippet }
        : { _tag: "Failed", reason: result.reason },
    latencyMs: 120,
    nextDueAt: due === undefined ? Option.none() : Option.some(at(due))
  })

const success = (n: number, minutes: number) =>
  new WebhookDelivery.AttemptSucceeded({
    attempt: n,
    at: at(minutes),
    statusCode: 200,
    snippet: "",
    latencyMs: 120
  })

/** The schedule in minutes after the initial attempt: 15 min, 1 h, 4 h, 8 h, 24 h. */
const SCHEDULE = [15, 60, 240, 480, 1440]

/** Six failed attempts, each made exactly when due: the history of an EXHAUSTED delivery. */
const exhausted = () => [
  ...scheduled(),
  failure(1, 0, 15),
  failure(2, 15, 60),
  failure(3, 60, 240),
  failure(4, 240, 480),
  failure(5, 480, 1440),
  failure(6, 1440, undefined),
  new WebhookDelivery.DeliveryExhausted({ at: at(1440) })
]

const spec = DeciderSpec.for(WebhookDelivery.WebhookDelivery)

describe("WebhookDelivery", () => {
  describe("ScheduleDelivery", () => {
    it("without a URL (no webhook registered, W15) the notification is recorded and born CANCELLED", () => {
      const events = Either.getOrThrow(
        WebhookDelivery.decide(schedule({ url: undefined }), WebhookDelivery.initialState)
      )
      expect(events.map((e) => e._tag)).toEqual(["DeliveryScheduled", "DeliveryCancelled"])
      const state = fold(WebhookDelivery.WebhookDelivery, events)
      expect(state._tag).toBe("CANCELLED")
      if (state._tag === "Initial") return
      expect([state.url, state.notification.body, state.dueAt]).toEqual(["", body, Option.none()])
      expect(WebhookDelivery.isDue(state, at(60))).toBe(false)
      // Nothing is ever attempted, and an administrator cannot re-send it.
      expect(Either.isLeft(WebhookDelivery.decide(attempt(1, 1), state))).toBe(true)
      expect(
        Either.isLeft(WebhookDelivery.decide(new WebhookDelivery.ResendDelivery({ url, now: at(2) }), state))
      ).toBe(true)
    })

    it("a notification is scheduled PENDING with its initial attempt due at once", () => {
      spec
        .given([])
        .when(schedule())
        .then([new WebhookDelivery.DeliveryScheduled({ ...notification, dueAt: at(0), createdAt: at(0) })])
    })
    it("a notification id is scheduled once", () => {
      spec
        .given(scheduled())
        .when(schedule())
        .thenFails(WebhookDelivery.DeliveryAlreadyExists, { notificationId })
    })
  })

  describe("RecordAttempt", () => {
    it("an answer of HTTP 200 delivers the notification", () => {
      spec
        .given(scheduled())
        .when(attempt(1, 0, answered(200)))
        .then([success(1, 0)])
    })
    it("a 201 is not a 200: retry 1 is due 15 minutes after the initial attempt", () => {
      spec
        .given(scheduled())
        .when(attempt(1, 0, answered(201)))
        .then([failure(1, 0, 15, answered(201))])
    })
    it("a timeout or a refused connection fails the attempt", () => {
      spec
        .given(scheduled())
        .when(attempt(1, 0, failed("timeout after 2000 ms")))
        .then([failure(1, 0, 15, failed("timeout after 2000 ms"))])
      spec
        .given(scheduled())
        .when(attempt(1, 0, failed("ECONNREFUSED")))
        .then([failure(1, 0, 15, failed("ECONNREFUSED"))])
    })
    it("retries are due at their delay after the initial attempt, not after the previous one", () => {
      // The initial attempt at 10:00 and retry 1 made late at +20 min: retry 2 is still due at +1 h.
      spec
        .given([...scheduled(), failure(1, 0, 15)])
        .when(attempt(2, 20))
        .then([failure(2, 20, 60)])
      spec
        .given([...scheduled(), failure(1, 0, 15), failure(2, 20, 60)])
        .when(attempt(3, 70))
        .then([failure(3, 70, 240)])
    })
    it("the schedule counts from the initial attempt, even when it was made after it was due", () => {
      spec
        .given(scheduled())
        .when(attempt(1, 3))
        .then([failure(1, 3, 18)])
    })
    it("when the 5th retry fails the delivery is EXHAUSTED", () => {
      const history = exhausted()
      spec.given(history.slice(0, -2)).when(attempt(6, 1440)).then(history.slice(-2))
    })
    it("the response snippet is bounded to 512 characters", () => {
      const long = "x".repeat(2_000)
      spec
        .given(scheduled())
        .when(attempt(1, 0, answered(503, long)))
        .then([failure(1, 0, 15, answered(503, "x".repeat(512)))])
      spec
        .given(scheduled())
        .when(attempt(1, 0, answered(200, long)))
        .then([
          new WebhookDelivery.AttemptSucceeded({
            attempt: 1,
            at: at(0),
            statusCode: 200,
            snippet: "x".repeat(512),
            latencyMs: 120
          })
        ])
      spec
        .given(scheduled())
        .when(attempt(1, 0, failed(long)))
        .then([failure(1, 0, 15, failed("x".repeat(512)))])
    })
    it("a report of an attempt already recorded changes nothing", () => {
      spec
        .given([...scheduled(), failure(1, 0, 15)])
        .when(attempt(1, 0))
        .thenNothing()
      spec
        .given([...scheduled(), success(1, 0)])
        .when(attempt(1, 0, answered(200)))
        .thenNothing()
    })
    it("a report that contradicts a recorded attempt is refused", () => {
      spec
        .given([...scheduled(), failure(1, 0, 15)])
        .when(attempt(1, 0, answered(200)))
        .thenFails(WebhookDelivery.ConflictingAttempt, { attempt: 1 })
    })
    it("an attempt number other than the next one is refused", () => {
      spec
        .given([...scheduled(), failure(1, 0, 15)])
        .when(attempt(3, 15))
        .thenFails(WebhookDelivery.UnexpectedAttempt, { attempt: 3, expected: 2 })
    })
    it("a DELIVERED notification is not attempted again", () => {
      spec
        .given([...scheduled(), success(1, 0)])
        .when(attempt(2, 15))
        .thenFails(WebhookDelivery.DeliveryNotInState, { status: "DELIVERED" })
    })
    it("an EXHAUSTED notification is not attempted again", () => {
      spec
        .given(exhausted())
        .when(attempt(7, 2000))
        .thenFails(WebhookDelivery.DeliveryNotInState, { status: "EXHAUSTED" })
    })
    it("an attempt in flight when the webhook was deleted is recorded and the delivery stays CANCELLED", () => {
      const history = [...scheduled(), new WebhookDelivery.DeliveryCancelled({ at: at(1) })]
      const command = attempt(1, 0, answered(200))
      spec
        .given(history)
        .when(command)
        .then([success(1, 0)])
      const after = fold(WebhookDelivery.WebhookDelivery, [...history, success(1, 0)])
      expect(after._tag).toBe("CANCELLED")
      spec
        .given(history)
        .when(attempt(1, 0))
        .then([failure(1, 0, undefined)])
    })
    it("no attempt starts after the webhook was deleted", () => {
      spec
        .given([...scheduled(), new WebhookDelivery.DeliveryCancelled({ at: at(1) })])
        .when(attempt(1, 2))
        .thenFails(WebhookDelivery.DeliveryNotInState, { status: "CANCELLED" })
    })
    it("an attempt of a notification never scheduled is not found", () => {
      spec.given([]).when(attempt(1, 0)).thenFails(WebhookDelivery.DeliveryNotFound)
    })
  })

  describe("ResendDelivery", () => {
    it("an administrator re-sends an EXHAUSTED notification: due now, same notification id", () => {
      spec
        .given(exhausted())
        .when(new WebhookDelivery.ResendDelivery({ url, now: at(3000) }))
        .then([new WebhookDelivery.ResendRequested({ url, at: at(3000) })])
    })
    it("a re-send starts a new round: attempts keep counting and the schedule restarts", () => {
      const history = [...exhausted(), new WebhookDelivery.ResendRequested({ url, at: at(3000) })]
      const state = fold(WebhookDelivery.WebhookDelivery, history)
      expect(state._tag).toBe("PENDING")
      expect(WebhookDelivery.isDue(state, at(3000))).toBe(true)
      spec
        .given(history)
        .when(attempt(7, 3001))
        .then([failure(7, 3001, 3016)])
    })
    it("an administrator re-sends a DELIVERED notification", () => {
      spec
        .given([...scheduled(), success(1, 0)])
        .when(new WebhookDelivery.ResendDelivery({ url: "https://merchant.example/new", now: at(10) }))
        .then([new WebhookDelivery.ResendRequested({ url: "https://merchant.example/new", at: at(10) })])
    })
    it("a PENDING notification is not re-sent: it is already scheduled", () => {
      spec
        .given(scheduled())
        .when(new WebhookDelivery.ResendDelivery({ url, now: at(10) }))
        .thenFails(WebhookDelivery.DeliveryNotInState, { status: "PENDING" })
    })
    it("a CANCELLED notification is not re-sent", () => {
      spec
        .given([...scheduled(), new WebhookDelivery.DeliveryCancelled({ at: at(1) })])
        .when(new WebhookDelivery.ResendDelivery({ url, now: at(10) }))
        .thenFails(WebhookDelivery.DeliveryNotInState, { status: "CANCELLED" })
    })
  })

  describe("CancelDelivery", () => {
    it("deleting the webhook stops delivery", () => {
      spec
        .given([...scheduled(), failure(1, 0, 15)])
        .when(new WebhookDelivery.CancelDelivery({ now: at(5) }))
        .then([new WebhookDelivery.DeliveryCancelled({ at: at(5) })])
    })
    it("cancelling a DELIVERED notification changes nothing", () => {
      spec
        .given([...scheduled(), success(1, 0)])
        .when(new WebhookDelivery.CancelDelivery({ now: at(5) }))
        .thenNothing()
    })
    it("cancelling a CANCELLED delivery again changes nothing", () => {
      spec
        .given([...scheduled(), new WebhookDelivery.DeliveryCancelled({ at: at(1) })])
        .when(new WebhookDelivery.CancelDelivery({ now: at(5) }))
        .thenNothing()
    })
  })

  describe("retry schedule", () => {
    it("retries are due at 15 min, 1 h, 4 h, 8 h and 24 h after the initial attempt", () => {
      expect(WebhookDelivery.RETRY_DELAYS.map(Duration.toMinutes)).toEqual(SCHEDULE)
      expect(WebhookDelivery.MAX_ATTEMPTS).toBe(6)
      const first = at(0)
      const due = [0, 1, 2, 3, 4, 5, 6, 7].map((n) => WebhookDelivery.nextDueAt(first, n))
      expect(due).toEqual([
        Option.some(at(0)),
        ...SCHEDULE.map((m) => Option.some(at(m))),
        Option.none(),
        Option.none()
      ])
    })

    it.prop(
      "whenever the attempts are made, the due times are exactly the schedule, strictly increasing, and at most 6 attempts are made",
      [FastCheck.array(FastCheck.integer({ min: 0, max: 600 }), { minLength: 8, maxLength: 8 })],
      ([lateness]) => {
        let state = fold(WebhookDelivery.WebhookDelivery, scheduled())
        let firstAt: DateTime.Utc | undefined
        const dues: Array<DateTime.Utc> = []
        for (let n = 1; n <= 8; n++) {
          // Each attempt is made some minutes after it was due.
          const due = Option.getOrThrow(state._tag === "Initial" ? Option.none() : state.dueAt)
          const now = DateTime.addDuration(due, Duration.minutes(lateness[n - 1]!))
          firstAt ??= now
          const result = WebhookDelivery.decide(
            new WebhookDelivery.RecordAttempt({ attempt: n, result: answered(500), latencyMs: 1, now }),
            state
          )
          const events = Either.getOrThrow(result)
          state = fold(WebhookDelivery.WebhookDelivery, events, state)
          const failedEvent = events[0] as WebhookDelivery.AttemptFailed
          if (Option.isSome(failedEvent.nextDueAt)) dues.push(failedEvent.nextDueAt.value)
          if (state._tag === "EXHAUSTED") {
            expect(n).toBe(WebhookDelivery.MAX_ATTEMPTS)
            break
          }
        }
        expect(state._tag).toBe("EXHAUSTED")
        expect(dues).toEqual(WebhookDelivery.RETRY_DELAYS.map((d) => DateTime.addDuration(firstAt!, d)))
        for (let i = 1; i < dues.length; i++) expect(DateTime.lessThan(dues[i - 1]!, dues[i]!)).toBe(true)
        const seventh = WebhookDelivery.decide(attempt(7, 100_000), state)
        expect(Either.isLeft(seventh)).toBe(true)
      }
    )
  })

  describe("Retry-After", () => {
    it.prop(
      "an endpoint's Retry-After moves each retry to no earlier than its slot and no later than the round's last slot; the number of attempts stays six",
      [FastCheck.array(FastCheck.integer({ min: 0, max: 48 * 3600 * 1000 }), { minLength: 8, maxLength: 8 })],
      ([asked]) => {
        let state = fold(WebhookDelivery.WebhookDelivery, scheduled())
        let firstAt: DateTime.Utc | undefined
        let made = 0
        for (let n = 1; n <= 8 && state._tag === "PENDING"; n++) {
          const now = Option.getOrThrow(state.dueAt)
          firstAt ??= now
          const events = Either.getOrThrow(
            WebhookDelivery.decide(
              new WebhookDelivery.RecordAttempt({
                attempt: n,
                result: answered(429),
                latencyMs: 1,
                now,
                retryAfterMs: asked[n - 1]!
              }),
              state
            )
          )
          made++
          const failed = events[0] as WebhookDelivery.AttemptFailed
          const slot = WebhookDelivery.nextDueAt(firstAt, n)
          if (Option.isSome(failed.nextDueAt)) {
            const next = DateTime.toEpochMillis(failed.nextDueAt.value)
            const slotMillis = DateTime.toEpochMillis(Option.getOrThrow(slot))
            const last = DateTime.toEpochMillis(firstAt) + 24 * 3600 * 1000
            expect(next).toBe(
              Math.max(slotMillis, Math.min(DateTime.toEpochMillis(now) + asked[n - 1]!, last))
            )
          } else expect(Option.isNone(slot)).toBe(true)
          state = fold(WebhookDelivery.WebhookDelivery, events, state)
        }
        expect(made).toBe(WebhookDelivery.MAX_ATTEMPTS)
        expect(state._tag).toBe("EXHAUSTED")
      }
    )
  })

  describe("isDelivered", () => {
    it.prop("only HTTP 200 counts as delivered", [FastCheck.integer({ min: 100, max: 599 })], ([status]) => {
      expect(WebhookDelivery.isDelivered(status)).toBe(status === 200)
      const events = Either.getOrThrow(
        WebhookDelivery.decide(
          attempt(1, 0, answered(status)),
          fold(WebhookDelivery.WebhookDelivery, scheduled())
        )
      )
      expect(events[0]!._tag).toBe(status === 200 ? "AttemptSucceeded" : "AttemptFailed")
    })
  })

  describe("boundSnippet", () => {
    it.prop(
      "a recorded snippet is at most 512 characters and a prefix of the response",
      [FastCheck.string({ unit: "binary", maxLength: 1_000 })],
      ([text]) => {
        const bounded = WebhookDelivery.boundSnippet(text)
        expect(bounded.length).toBeLessThanOrEqual(WebhookDelivery.SNIPPET_MAX_LENGTH)
        expect(text.startsWith(bounded)).toBe(true)
        if (text.length <= 512) expect(bounded).toBe(text)
        else expect(bounded.length).toBeGreaterThanOrEqual(511)
      }
    )
    it("a snippet is never cut inside a surrogate pair", () => {
      const text = "x".repeat(511) + "😀"
      expect(WebhookDelivery.boundSnippet(text)).toBe("x".repeat(511))
    })
  })

  describe("signingKeyFor", () => {
    const production = (integration: SigningKey.Integration) => ({ integration, mode: "production" })
    it("1. a payment made through the terminal API is signed with the terminal-API key", () => {
      for (const paymentButtonEnabled of [true, false]) {
        expect(
          SigningKey.signingKeyFor({ channel: "terminal_api", sandbox: false, paymentButtonEnabled })
        ).toEqual(production("terminal_api"))
      }
    })
    it("2. a payment made through the payment button is signed with the payment-button key", () => {
      for (const paymentButtonEnabled of [true, false]) {
        expect(
          SigningKey.signingKeyFor({ channel: "payment_button", sandbox: false, paymentButtonEnabled })
        ).toEqual(production("payment_button"))
      }
    })
    it("3. any other payment is signed with the payment-button key when enabled, otherwise with the terminal-API key", () => {
      for (const channel of ["payment_link", "other"] as const) {
        expect(SigningKey.signingKeyFor({ channel, sandbox: false, paymentButtonEnabled: true })).toEqual(
          production("payment_button")
        )
        expect(SigningKey.signingKeyFor({ channel, sandbox: false, paymentButtonEnabled: false })).toEqual(
          production("terminal_api")
        )
      }
    })
    it.prop(
      "4. a transaction made with test keys is signed with the empty secret",
      [FastCheck.constantFrom(...SigningKey.PaymentChannel.literals), FastCheck.boolean()],
      ([channel, paymentButtonEnabled]) => {
        expect(SigningKey.signingKeyFor({ channel, sandbox: true, paymentButtonEnabled })).toBe("EMPTY")
      }
    )
  })

  describe("properties", () => {
    const step = FastCheck.integer({ min: 0, max: 300 })
    type Intent =
      | { readonly kind: "schedule" }
      | { readonly kind: "attempt"; readonly offset: number; readonly status: number | undefined }
      | { readonly kind: "redeliver" }
      | { readonly kind: "resend" }
      | { readonly kind: "cancel" }
    const intent: FastCheck.Arbitrary<readonly [Intent, number]> = FastCheck.tuple(
      FastCheck.oneof(
        { arbitrary: FastCheck.constant<Intent>({ kind: "schedule" }), weight: 1 },
        {
          arbitrary: FastCheck.record({
            kind: FastCheck.constant("attempt" as const),
            // Mostly the next attempt; sometimes a duplicate, sometimes one out of order.
            offset: FastCheck.constantFrom(0, 0, 0, 0, 0, 0, -1, 1),
            status: FastCheck.constantFrom(200, 500, 500, 204, 404, 500, undefined)
          }),
          weight: 10
        },
        // The dispatcher reports the last attempt recorded again, word for word.
        { arbitrary: FastCheck.constant<Intent>({ kind: "redeliver" }), weight: 2 },
        { arbitrary: FastCheck.constant<Intent>({ kind: "resend" }), weight: 1 },
        { arbitrary: FastCheck.constant<Intent>({ kind: "cancel" }), weight: 1 }
      ),
      step
    )
    /** The report of an attempt recorded already, as the dispatcher first made it. */
    const reportOf = (recorded: WebhookDelivery.AttemptSucceeded | WebhookDelivery.AttemptFailed) =>
      new WebhookDelivery.RecordAttempt({
        attempt: recorded.attempt,
        result: recorded._tag === "AttemptSucceeded" ? answered(200, recorded.snippet) : recorded.outcome,
        latencyMs: recorded.latencyMs,
        now: recorded.at
      })
    // Times only move forward; attempt numbers are relative to the attempts recorded so far. A few
    // runs start with no webhook registered: the notification is born CANCELLED (W15).
    const run = FastCheck.tuple(
      FastCheck.constantFrom(schedule(), schedule(), schedule(), schedule({ url: undefined })),
      FastCheck.array(intent, { maxLength: 30 })
    ).map(([first, intents]) => {
      const commands: Array<WebhookDelivery.Command> = [first]
      let state = fold(
        WebhookDelivery.WebhookDelivery,
        Either.getOrThrow(WebhookDelivery.decide(first, WebhookDelivery.initialState))
      )
      let minutes = 0
      for (const [i, dt] of intents) {
        minutes += dt
        const now = at(minutes)
        const made = state._tag === "Initial" ? 0 : state.attempts.length
        const last = state._tag === "Initial" ? undefined : state.attempts[made - 1]
        const command: WebhookDelivery.Command =
          i.kind === "redeliver" && last !== undefined
            ? reportOf(last)
            : i.kind === "schedule"
              ? schedule({ now })
              : i.kind === "attempt"
                ? new WebhookDelivery.RecordAttempt({
                    attempt: Math.max(1, made + 1 + i.offset),
                    result: i.status === undefined ? failed("timeout") : answered(i.status),
                    latencyMs: 120,
                    now
                  })
                : i.kind === "resend"
                  ? new WebhookDelivery.ResendDelivery({ url, now })
                  : new WebhookDelivery.CancelDelivery({ now })
        commands.push(command)
        const result = WebhookDelivery.decide(command, state)
        if (Either.isRight(result)) state = fold(WebhookDelivery.WebhookDelivery, result.right, state)
      }
      return commands
    })

    transitionProperties({
      aggregate: WebhookDelivery.WebhookDelivery,
      run,
      id: notificationId,
      targeted: {
        // Six failed attempts on time, then the webhook deleted: random runs seldom fail six in a row.
        "EXHAUSTED ▸ CancelDelivery → noop": FastCheck.record({
          status: FastCheck.constantFrom(500, 404, 204),
          later: FastCheck.nat({ max: 600 })
        }).map(({ status, later }) => [
          schedule(),
          ...[0, ...SCHEDULE].map((m, i) => attempt(i + 1, m, answered(status))),
          new WebhookDelivery.CancelDelivery({ now: at(1440 + later) })
        ])
      },
      absorbing: {
        title:
          "CANCELLED is absorbing; DELIVERED and EXHAUSTED are final for the dispatcher but an administrator may re-send",
        states: ["CANCELLED"],
        also: () => {
          for (const s of ["DELIVERED", "EXHAUSTED"] as const) {
            // A report there is only a duplicate, recorded already: nothing to record.
            expect(Transitions.outcomes(WebhookDelivery.transitions, s, "RecordAttempt")).toEqual(["noop"])
            expect(Transitions.outcomes(WebhookDelivery.transitions, s, "ResendDelivery")).toEqual([
              "PENDING"
            ])
          }
        }
      }
    })

    it.prop("a round never makes more than 6 attempts", [run], ([commands]) => {
      let state = WebhookDelivery.initialState
      for (const command of commands) {
        const result = WebhookDelivery.decide(command, state)
        if (Either.isRight(result)) state = fold(WebhookDelivery.WebhookDelivery, result.right, state)
        if (state._tag !== "Initial")
          expect(state.roundAttempts).toBeLessThanOrEqual(WebhookDelivery.MAX_ATTEMPTS)
      }
    })
  })
})
