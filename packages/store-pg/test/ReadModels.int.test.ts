/**
 * The spec's read models, maintained from domain events and rebuilt from the log (on PGlite).
 * Slow by design: each property run folds, maintains and rebuilds every read model of its history.
 */
import * as Aggregate from "@cobro/domain/Aggregate"
import * as CommandHandler from "@cobro/domain/CommandHandler"
import * as EventStore from "@cobro/domain/EventStore"
import { IdGenerator } from "@cobro/domain/IdGenerator"
import { IntentReference, MerchantId, PaymentLinkId, TransactionId } from "@cobro/domain/Ids"
import { Amount } from "@cobro/domain/Money"
import * as Payment from "@cobro/domain/Payment"
import * as PaymentIntent from "@cobro/domain/PaymentIntent"
import * as PaymentLink from "@cobro/domain/PaymentLink"
import * as Refund from "@cobro/domain/Refund"
import * as WebhookDelivery from "@cobro/domain/WebhookDelivery"
import { expect, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { randomUUID } from "node:crypto"
import * as Projection from "../src/Projection.js"
import * as ReadModels from "../src/ReadModels.js"
import * as Databases from "./support/Databases.js"
import { randomIds } from "./support/Fixtures.js"
import { storeSuite, withStore } from "./support/StoreTest.js"

const at = (iso: string) => DateTime.unsafeMake(iso)

const toNew = <E extends { readonly _tag: string }, I>(
  aggregate: { readonly Event: Schema.Schema<E, I> },
  event: E
) => ({
  eventId: randomUUID(),
  type: event._tag,
  schemaVersion: 1,
  data: Schema.encodeSync(aggregate.Event)(event),
  metadata: {}
})

layer(Databases.pglite, { excludeTestServices: true })("read models", (it) => {
  it.effect(
    "C9: refunds are found by the transaction they refund",
    withStore(function* ({ store, sql }) {
      const requested = (refundId: string, iso: string) =>
        new Refund.RefundRequested({
          refundId: refundId as Refund.RefundRequested["refundId"],
          merchantId: "MER_1" as Refund.RefundRequested["merchantId"],
          sandbox: true,
          transactionId: "TRX_1" as Refund.RefundRequested["transactionId"],
          referenceId: "order-1" as Refund.RefundRequested["referenceId"],
          amount: 1000 as Refund.RefundRequested["amount"],
          reason: "customer asked",
          requestedAt: at(iso)
        })
      for (const [id, iso] of [
        ["RFD_1", "2024-01-01T10:00:00Z"],
        ["RFD_2", "2024-01-02T10:00:00Z"]
      ] as const) {
        yield* store.append(
          Aggregate.streamId(Refund.Refund, id),
          [toNew(Refund.Refund, requested(id, iso))],
          EventStore.ExpectedVersion.NoStream()
        )
      }
      const rows = yield* sql<{ refund_id: string }>`
        SELECT refund_id FROM cobro_rm_refunds_by_transaction WHERE transaction_id = 'TRX_1' ORDER BY requested_at`
      expect(rows.map((r) => r.refund_id)).toEqual(["RFD_1", "RFD_2"])
      yield* Projection.rebuild(ReadModels.refundsByTransaction)
      expect(
        yield* sql`SELECT refund_id FROM cobro_rm_refunds_by_transaction WHERE transaction_id = 'TRX_1' ORDER BY requested_at`
      ).toEqual(rows)
    })
  )

  it.effect(
    "A4 with is_external_reference=true: the last notification of each payment sent with that reference",
    withStore(function* ({ store, sql }) {
      const reference = `order-${randomUUID().slice(0, 8)}`
      const schedule = (subject: string, type: string, ref: string | undefined, iso: string) =>
        store.append(
          Aggregate.streamId(WebhookDelivery.WebhookDelivery, randomUUID()),
          [
            toNew(
              WebhookDelivery.WebhookDelivery,
              new WebhookDelivery.DeliveryScheduled({
                notificationId: randomUUID() as WebhookDelivery.DeliveryScheduled["notificationId"],
                merchantId: "MER_1" as WebhookDelivery.DeliveryScheduled["merchantId"],
                url: "https://merchant.example/hook",
                type: type as WebhookDelivery.DeliveryScheduled["type"],
                subject: subject as WebhookDelivery.DeliveryScheduled["subject"],
                body: JSON.stringify({
                  type,
                  subject,
                  time: 1704103200000000000,
                  data: { payment_id: subject, metadata: ref === undefined ? {} : { reference: ref } }
                }),
                signingKey: "EMPTY",
                sandbox: true,
                dueAt: at(iso),
                createdAt: at(iso)
              })
            )
          ],
          EventStore.ExpectedVersion.NoStream()
        )
      // Two payments share the reference; the first is rejected, then voided: its last one wins.
      yield* schedule("TRX_R1", "SALE_APPROVED", reference, "2024-01-01T10:00:00Z")
      yield* schedule("TRX_R2", "SALE_REJECTED", reference, "2024-01-01T10:01:00Z")
      yield* schedule("TRX_R1", "VOID_APPROVED", reference, "2024-01-01T10:02:00Z")
      yield* schedule("TRX_R3", "SALE_APPROVED", `${reference}-other`, "2024-01-01T10:03:00Z")
      yield* schedule("TRX_R4", "SALE_APPROVED", undefined, "2024-01-01T10:04:00Z")
      const byReference = () =>
        sql<{ subject: string; type: string }>`
            SELECT subject, type FROM cobro_rm_last_notification_by_reference
            WHERE merchant_id = 'MER_1' AND sandbox AND reference = ${reference}
            ORDER BY created_at DESC LIMIT 10`
      const found = yield* byReference()
      expect(found).toEqual([
        { subject: "TRX_R1", type: "VOID_APPROVED" },
        { subject: "TRX_R2", type: "SALE_REJECTED" }
      ])
      expect(
        yield* sql`SELECT subject FROM cobro_rm_last_notification_by_reference WHERE subject = 'TRX_R4'`
      ).toEqual([])
      yield* Projection.rebuild(ReadModels.lastNotificationByReference)
      expect(yield* byReference()).toEqual(found)
    })
  )

  it.effect(
    "webhook deliveries are due at their schedule, and not once delivered",
    withStore(function* ({ store, sql }) {
      const stream = Aggregate.streamId(WebhookDelivery.WebhookDelivery, randomUUID())
      const scheduled = new WebhookDelivery.DeliveryScheduled({
        notificationId: randomUUID() as WebhookDelivery.DeliveryScheduled["notificationId"],
        merchantId: "MER_1" as WebhookDelivery.DeliveryScheduled["merchantId"],
        url: "https://merchant.example/hook",
        type: "SALE_APPROVED",
        subject: "TRX_9" as WebhookDelivery.DeliveryScheduled["subject"],
        body: "{}",
        signingKey: "EMPTY",
        sandbox: true,
        dueAt: at("2024-01-01T10:00:00Z"),
        createdAt: at("2024-01-01T10:00:00Z")
      })
      yield* store.append(
        stream,
        [toNew(WebhookDelivery.WebhookDelivery, scheduled)],
        EventStore.ExpectedVersion.NoStream()
      )
      const due = () =>
        sql<{ status: string; due_at: Date | null }>`
          SELECT status, due_at FROM cobro_rm_webhook_deliveries WHERE stream_id = ${stream}`
      expect(yield* due()).toEqual([{ status: "PENDING", due_at: new Date("2024-01-01T10:00:00Z") }])
      expect(
        yield* sql`SELECT subject, type FROM cobro_rm_last_notification WHERE subject = 'TRX_9'`
      ).toEqual([{ subject: "TRX_9", type: "SALE_APPROVED" }])
      const failed = new WebhookDelivery.AttemptFailed({
        attempt: 1 as WebhookDelivery.AttemptFailed["attempt"],
        at: at("2024-01-01T10:00:01Z"),
        outcome: { _tag: "Failed", reason: "timeout" } as WebhookDelivery.AttemptFailed["outcome"],
        latencyMs: 30000 as WebhookDelivery.AttemptFailed["latencyMs"],
        nextDueAt: Option.some(at("2024-01-01T10:05:01Z"))
      })
      const encodedFailed = Schema.encodeEither(WebhookDelivery.Event)(failed)
      if (encodedFailed._tag === "Right") {
        yield* store.append(
          stream,
          [
            {
              eventId: randomUUID(),
              type: failed._tag,
              schemaVersion: 1,
              data: encodedFailed.right,
              metadata: {}
            }
          ],
          EventStore.ExpectedVersion.Exact({ version: 1 })
        )
        expect(yield* due()).toEqual([{ status: "PENDING", due_at: new Date("2024-01-01T10:05:01Z") }])
      }
      const succeeded = new WebhookDelivery.AttemptSucceeded({
        attempt: 2 as WebhookDelivery.AttemptSucceeded["attempt"],
        at: at("2024-01-01T10:05:02Z"),
        statusCode: 200,
        snippet: "ok" as WebhookDelivery.AttemptSucceeded["snippet"],
        latencyMs: 12 as WebhookDelivery.AttemptSucceeded["latencyMs"]
      })
      yield* store.append(
        stream,
        [toNew(WebhookDelivery.WebhookDelivery, succeeded)],
        EventStore.ExpectedVersion.Exact({ version: 2 })
      )
      expect(yield* due()).toEqual([{ status: "DELIVERED", due_at: null }])
      yield* Projection.rebuild(ReadModels.webhookDeliveries)
      expect(yield* due()).toEqual([{ status: "DELIVERED", due_at: null }])
    })
  )
})

// ---------------------------------------------------------------------------------------------
// The link expiry sweeper's read model, on PGlite and on PostgreSQL
// ---------------------------------------------------------------------------------------------

const handleLink = CommandHandler.make(PaymentLink.PaymentLink)

/** 2026-11-21T15:00:00Z, the instant the sweeper looks from. */
const T = Date.parse("2026-11-21T15:00:00Z")
const instant = (millis: number) => DateTime.unsafeMake(millis)
const nanosOf = (millis: number) => BigInt(millis) * 1_000_000n
const HOUR = 3_600_000

/** What happens to a link after its creation, each step at an instant (ms) before T. */
interface Step {
  readonly _tag: "start" | "fail" | "pay" | "cancel" | "expire"
  readonly at: number
}

/**
 * Creates a link (OPEN, CREDIT_CARD 1000–5000000) at `createdAt` expiring at `expiresAt` (nanoseconds,
 * none: never), then applies the steps through the decider; a step the decider refuses is skipped.
 */
const givenLink = (createdAt: number, expiresAt: bigint | undefined, steps: ReadonlyArray<Step> = []) =>
  Effect.gen(function* () {
    const ids = yield* IdGenerator
    const linkId = PaymentLinkId.make(yield* ids.next("LNK_"))
    yield* handleLink(
      linkId,
      new PaymentLink.CreateLink({
        linkId,
        merchantId: MerchantId.make("MER_1"),
        sandbox: true,
        amountType: "OPEN",
        amount: Option.none(),
        reference: linkId,
        description: Option.none(),
        expiresAt: Option.fromNullable(expiresAt),
        callbackUrl: Option.none(),
        paymentMethods: ["CREDIT_CARD"],
        payerEmail: Option.none(),
        imageUrl: Option.none(),
        now: instant(createdAt)
      })
    )
    let transactionId = TransactionId.make(yield* ids.next("TRX_"))
    for (const step of steps) {
      const now = instant(step.at)
      if (step._tag === "start") transactionId = TransactionId.make(yield* ids.next("TRX_"))
      const command =
        step._tag === "start"
          ? new PaymentLink.StartPayment({
              transactionId,
              paymentMethod: "CREDIT_CARD",
              amount: Amount.make(10_000),
              bounds: { min: Amount.make(1_000), max: Amount.make(5_000_000) },
              now
            })
          : step._tag === "fail"
            ? new PaymentLink.FailPayment({ transactionId, now })
            : step._tag === "pay"
              ? new PaymentLink.CompletePayment({ transactionId, now })
              : step._tag === "cancel"
                ? new PaymentLink.CancelLink({ now })
                : new PaymentLink.ExpireLink({ now })
      yield* Effect.either(handleLink(linkId, command))
    }
    return linkId
  })

/** The links the log says are ACTIVE and overdue at `now`, among `links`, as the sweeper must find them. */
const dueByTheLog = (links: ReadonlyArray<PaymentLinkId>, now: DateTime.DateTime) =>
  Effect.gen(function* () {
    const due: Array<{ readonly linkId: PaymentLinkId; readonly expiresAt: bigint }> = []
    for (const linkId of links) {
      const { state } = yield* CommandHandler.load(PaymentLink.PaymentLink)(linkId)
      if (state._tag === "ACTIVE" && PaymentLink.isOverdue(state.link, now)) {
        due.push({ linkId, expiresAt: Option.getOrThrow(state.link.expiresAt) })
      }
    }
    return due
      .sort((a, b) =>
        a.expiresAt < b.expiresAt ? -1 : a.expiresAt > b.expiresAt ? 1 : a.linkId < b.linkId ? -1 : 1
      )
      .map((d) => d.linkId)
  })

/** Only the links of this test (the database is shared by the suite's tests). */
const dueAmong = (links: ReadonlyArray<PaymentLinkId>, now: DateTime.DateTime) =>
  Effect.map(ReadModels.dueLinks({ now, limit: 1_000_000 }), (due) => due.filter((id) => links.includes(id)))

for (const [name, database] of [
  ["PGlite", Databases.pglite],
  ["PostgreSQL", Databases.postgres]
] as const) {
  storeSuite(Layer.merge(database, randomIds), 120_000)(`link expiry read model (${name})`, (it) => {
    it.effect(
      "the sweeper finds the ACTIVE links due at now (inclusive, to the nanosecond), longest overdue first",
      () =>
        Effect.gen(function* () {
          const created = T - 4 * HOUR
          const atT = yield* givenLink(created, nanosOf(T))
          const oneNanoLater = yield* givenLink(created, nanosOf(T) + 1n)
          const never = yield* givenLink(created, undefined)
          const processing = yield* givenLink(created, nanosOf(T - HOUR), [
            { _tag: "start", at: T - 2 * HOUR }
          ])
          const failedBack = yield* givenLink(created, nanosOf(T - 2 * HOUR), [
            { _tag: "start", at: T - 3 * HOUR },
            { _tag: "fail", at: T - 2.5 * HOUR }
          ])
          const paid = yield* givenLink(created, nanosOf(T - HOUR), [
            { _tag: "start", at: T - 2 * HOUR },
            { _tag: "pay", at: T - 1.5 * HOUR }
          ])
          const cancelled = yield* givenLink(created, nanosOf(T - HOUR), [
            { _tag: "cancel", at: T - 2 * HOUR }
          ])
          const expired = yield* givenLink(created, nanosOf(T - HOUR), [{ _tag: "expire", at: T - HOUR / 2 }])
          const rejected = yield* givenLink(created, nanosOf(T - HOUR), [
            { _tag: "start", at: T - 1.5 * HOUR },
            { _tag: "fail", at: T - HOUR / 2 }
          ])
          const links = [atT, oneNanoLater, never, processing, failedBack, paid, cancelled, expired, rejected]
          yield* Projection.catchUp(ReadModels.linkExpiry)

          expect(yield* dueAmong(links, instant(T))).toEqual([failedBack, atT])
          expect(yield* dueAmong(links, instant(T - 1))).toEqual([failedBack])
          expect(yield* dueAmong(links, instant(T + 1))).toEqual([failedBack, atT, oneNanoLater])
          expect(yield* dueAmong(links, instant(T + 1))).toEqual(yield* dueByTheLog(links, instant(T + 1)))
          const sql = yield* SqlClient.SqlClient
          const rows = yield* sql<{ link_id: string; status: string }>`
              SELECT link_id, status FROM cobro_rm_link_expiry WHERE link_id IN ${sql.in(links)} ORDER BY link_id`
          // Only links that may still expire are kept; a link being paid is there, not due.
          expect(new Set(rows.map((r) => r.link_id))).toEqual(
            new Set([atT, oneNanoLater, processing, failedBack])
          )
          expect(rows.find((r) => r.link_id === processing)?.status).toBe("PROCESSING")

          // Recording the expiry takes the link out; a rebuild from the log gives the same rows.
          yield* handleLink(atT, new PaymentLink.ExpireLink({ now: instant(T) }))
          yield* Projection.catchUp(ReadModels.linkExpiry)
          expect(yield* dueAmong(links, instant(T + 1))).toEqual([failedBack, oneNanoLater])
          const before = yield* sql`SELECT * FROM cobro_rm_link_expiry ORDER BY stream_id`
          yield* Projection.rebuild(ReadModels.linkExpiry)
          expect(yield* sql`SELECT * FROM cobro_rm_link_expiry ORDER BY stream_id`).toEqual(before)
        })
    )

    it.effect("a round's limit takes the longest overdue links first", () =>
      Effect.gen(function* () {
        const links: Array<PaymentLinkId> = []
        for (let i = 5; i >= 1; i--) links.push(yield* givenLink(T - 10 * HOUR, nanosOf(T - i * HOUR)))
        yield* Projection.catchUp(ReadModels.linkExpiry)
        const first = (yield* ReadModels.dueLinks({ now: instant(T), limit: 1_000_000 })).filter((id) =>
          links.includes(id)
        )
        expect(first).toEqual(links)
        const limited = yield* ReadModels.dueLinks({ now: instant(T), limit: 2 })
        expect(limited).toHaveLength(2)
      })
    )

    if (name === "PGlite") {
      const step = FastCheck.oneof(
        FastCheck.constant("start" as const),
        FastCheck.constant("fail" as const),
        FastCheck.constant("pay" as const),
        FastCheck.constant("cancel" as const),
        FastCheck.constant("expire" as const)
      )
      const link = FastCheck.record({
        // Expiry from 6 h before T to 1 h after it, or none.
        expiresIn: FastCheck.option(FastCheck.integer({ min: -6 * 3600, max: 3600 }), { nil: undefined }),
        steps: FastCheck.array(FastCheck.tuple(step, FastCheck.integer({ min: 1, max: 7 * 3600 })), {
          maxLength: 5
        })
      })
      it.effect.prop(
        "whatever happened to the links, the read model lists exactly the ACTIVE overdue ones of the log, and a rebuild agrees",
        [
          FastCheck.array(link, { minLength: 1, maxLength: 6 }),
          FastCheck.integer({ min: -7 * 3600, max: 3600 })
        ],
        ([specs, lookAt]) =>
          Effect.gen(function* () {
            const created = T - 7 * HOUR
            const links: Array<PaymentLinkId> = []
            for (const spec of specs) {
              const expiresAt = spec.expiresIn === undefined ? undefined : nanosOf(T + spec.expiresIn * 1000)
              // Steps in time order after the creation.
              const steps = [...spec.steps]
                .sort((a, b) => a[1] - b[1])
                .map(([tag, after]): Step => ({ _tag: tag, at: created + after * 1000 }))
              links.push(yield* givenLink(created, expiresAt, steps))
            }
            yield* Projection.catchUp(ReadModels.linkExpiry)
            const now = instant(T + lookAt * 1000)
            const expected = yield* dueByTheLog(links, now)
            expect(yield* dueAmong(links, now)).toEqual(expected)
            yield* Projection.rebuild(ReadModels.linkExpiry)
            expect(yield* dueAmong(links, now)).toEqual(expected)
          }),
        { fastCheck: { numRuns: 25 } }
      )
    }
  })
}

// ---------------------------------------------------------------------------------------------
// The payment timeout sweeper's read model, on PGlite and on PostgreSQL
// ---------------------------------------------------------------------------------------------

const handlePayment = CommandHandler.make(Payment.Payment)
const handleIntent = CommandHandler.make(PaymentIntent.PaymentIntent)

/** What happens to an online payment after its attempt, each step at an instant (ms). */
interface OnlineStep {
  readonly _tag: "challenge" | "approve" | "reject" | "expire" | "intentPaid" | "intentFailed"
  readonly at: number
}

/**
 * An online payment (C4) attempted at `startedAt` on a new intent of MER_1, its attempt recorded on
 * the intent too unless `withIntent` is false (a crash between the two appends), then the steps
 * through the deciders; a step they refuse is skipped (so a crash between a payment's decision and
 * its intent's can be written as a decision without the intent step).
 */
const givenOnline = (startedAt: number, steps: ReadonlyArray<OnlineStep> = [], withIntent = true) =>
  Effect.gen(function* () {
    const ids = yield* IdGenerator
    const transactionId = TransactionId.make(yield* ids.next("TRX_"))
    const referenceId = IntentReference.make(yield* ids.next("order-"))
    const merchantId = MerchantId.make("MER_1")
    const key = PaymentIntent.streamKey(merchantId, true, referenceId)
    const amount = new PaymentIntent.IntentAmount({
      currency: "COP",
      total: Amount.make(555_020),
      tip: Amount.make(0),
      taxes: []
    })
    yield* handleIntent(
      key,
      new PaymentIntent.CreateIntent({
        merchantId,
        sandbox: true,
        referenceId,
        details: new PaymentIntent.IntentDetails({
          amount,
          description: Option.none(),
          callbackUrl: Option.some("https://shop.example/back"),
          metadata: Option.none(),
          customer: Option.none()
        }),
        deviceFingerprint: Option.none(),
        now: instant(startedAt - HOUR)
      })
    )
    yield* handlePayment(
      transactionId,
      new Payment.StartPayment({
        transactionId,
        merchantId,
        sandbox: true,
        referenceId,
        amount,
        paymentMethod: "CREDIT_CARD",
        card: Option.none(),
        payer: Option.none(),
        metadata: Option.none(),
        deviceFingerprint: Option.none(),
        now: instant(startedAt)
      })
    )
    if (withIntent) {
      yield* handleIntent(
        key,
        new PaymentIntent.StartPayment({
          transactionId,
          paymentMethod: "CREDIT_CARD",
          now: instant(startedAt)
        })
      )
    }
    for (const step of steps) {
      const now = instant(step.at)
      switch (step._tag) {
        case "challenge":
          yield* Effect.either(
            handlePayment(
              transactionId,
              new Payment.RequireChallenge({
                nextAction: { redirectUrl: "https://cobro.example/challenge", redirectMethod: "GET" },
                now
              })
            )
          )
          break
        case "approve":
          yield* Effect.either(
            handlePayment(
              transactionId,
              new Payment.CompleteChallenge({ result: { _tag: "Approved", approvalNumber: "123456" }, now })
            )
          )
          break
        case "reject":
          yield* Effect.either(
            handlePayment(transactionId, new Payment.RejectPayment({ reason: "declined", now }))
          )
          break
        case "expire":
          yield* Effect.either(
            handlePayment(
              transactionId,
              new Payment.ExpirePayment({ timeout: Payment.ABANDONED_PAYMENT_TIMEOUT, now })
            )
          )
          break
        case "intentPaid":
          yield* Effect.either(handleIntent(key, new PaymentIntent.CompletePayment({ transactionId, now })))
          break
        case "intentFailed":
          yield* Effect.either(handleIntent(key, new PaymentIntent.FailPayment({ transactionId, now })))
          break
      }
    }
    return { transactionId, key }
  })

/** A payment link's payment started at `startedAt`, then failed, paid or expired by the sweeper (or left). */
const givenLinkPayment = (
  startedAt: number,
  end?: { readonly _tag: "fail" | "pay" | "timeout"; readonly at: number }
) =>
  Effect.gen(function* () {
    const linkId = yield* givenLink(startedAt - HOUR, undefined, [{ _tag: "start", at: startedAt }])
    const { state } = yield* CommandHandler.load(PaymentLink.PaymentLink)(linkId)
    const transactionId = Option.getOrThrow(state._tag === "Initial" ? Option.none() : state.transactionId)
    if (end !== undefined) {
      const now = instant(end.at)
      yield* Effect.either(
        handleLink(
          linkId,
          end._tag === "fail"
            ? new PaymentLink.FailPayment({ transactionId, now })
            : end._tag === "pay"
              ? new PaymentLink.CompletePayment({ transactionId, now })
              : new PaymentLink.ExpirePayment({
                  transactionId,
                  timeout: Payment.ABANDONED_PAYMENT_TIMEOUT,
                  now
                })
        )
      )
    }
    return { linkId, transactionId }
  })

interface InFlight {
  readonly kind: ReadModels.InFlightKind
  readonly transactionId: TransactionId
  readonly startedAt: number
}

/** What the log says is under way since `startedBefore` or earlier, among the given payments, in the read model's order. */
const inFlightByTheLog = (
  links: ReadonlyArray<{ readonly linkId: PaymentLinkId; readonly transactionId: TransactionId }>,
  online: ReadonlyArray<{ readonly transactionId: TransactionId; readonly key: string }>,
  startedBefore: number
) =>
  Effect.gen(function* () {
    const found: Array<InFlight> = []
    for (const { linkId, transactionId } of links) {
      const { state } = yield* CommandHandler.load(PaymentLink.PaymentLink)(linkId)
      if (state._tag === "PROCESSING" && Option.contains(state.transactionId, transactionId)) {
        found.push({
          kind: "link",
          transactionId,
          startedAt: DateTime.toEpochMillis(Option.getOrThrow(state.paymentStartedAt))
        })
      }
    }
    for (const { key, transactionId } of online) {
      const payment = (yield* CommandHandler.load(Payment.Payment)(transactionId)).state
      const intent = (yield* CommandHandler.load(PaymentIntent.PaymentIntent)(key)).state
      if (payment._tag === "Initial") continue
      const undecided = payment._tag === "RUNNING" || payment._tag === "CHALLENGE"
      const intentWaits = intent._tag === "PROCESSING" && Option.contains(intent.transactionId, transactionId)
      if (undecided || intentWaits) {
        found.push({
          kind: "online",
          transactionId,
          startedAt: DateTime.toEpochMillis(payment.payment.attemptedAt)
        })
      }
    }
    return found
      .filter((p) => p.startedAt <= startedBefore)
      .sort(
        (a, b) =>
          a.startedAt - b.startedAt ||
          (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : a.transactionId < b.transactionId ? -1 : 1)
      )
  })

/** The read model's due payments among the given transactions (the database is shared by the suite's tests). */
const dueInFlight = (transactions: ReadonlyArray<TransactionId>, startedBefore: number) =>
  Effect.map(ReadModels.duePayments({ startedBefore: instant(startedBefore), limit: 1_000_000 }), (due) =>
    due
      .filter((p) => transactions.includes(p.transactionId))
      .map((p): InFlight => ({
        kind: p.kind,
        transactionId: p.transactionId,
        startedAt: DateTime.toEpochMillis(p.startedAt)
      }))
  )

for (const [name, database] of [
  ["PGlite", Databases.pglite],
  ["PostgreSQL", Databases.postgres]
] as const) {
  storeSuite(Layer.merge(database, randomIds), 120_000)(`payments in flight read model (${name})`, (it) => {
    it.effect(
      "the timeout sweeper finds the link payments PROCESSING and the online payments undecided since the cutoff (inclusive), oldest first",
      () =>
        Effect.gen(function* () {
          const MIN = 60_000
          const cutoff = T - HOUR
          const linkWaiting = yield* givenLinkPayment(T - 2 * HOUR)
          const linkAtCutoff = yield* givenLinkPayment(cutoff)
          const linkRecent = yield* givenLinkPayment(T - 30 * MIN)
          const linkPaid = yield* givenLinkPayment(T - 3 * HOUR, { _tag: "pay", at: T - 3 * HOUR + MIN })
          const linkFailed = yield* givenLinkPayment(T - 3 * HOUR, { _tag: "fail", at: T - 3 * HOUR + MIN })
          const linkTimedOut = yield* givenLinkPayment(T - 3 * HOUR, { _tag: "timeout", at: T - 2 * HOUR })
          const challenge = yield* givenOnline(T - 3 * HOUR, [{ _tag: "challenge", at: T - 3 * HOUR }])
          const approved = yield* givenOnline(T - 3 * HOUR, [
            { _tag: "challenge", at: T - 3 * HOUR },
            { _tag: "approve", at: T - 3 * HOUR + MIN },
            { _tag: "intentPaid", at: T - 3 * HOUR + MIN }
          ])
          const expired = yield* givenOnline(T - 3 * HOUR, [
            { _tag: "challenge", at: T - 3 * HOUR },
            { _tag: "expire", at: T - 2 * HOUR },
            { _tag: "intentFailed", at: T - 2 * HOUR }
          ])
          // A crash between the payment's decision and the intent's: the intent still waits.
          const intentStuck = yield* givenOnline(T - 4 * HOUR, [{ _tag: "reject", at: T - 4 * HOUR + MIN }])
          // A crash before the intent took the attempt, then the payment decided: nothing waits.
          const orphanDecided = yield* givenOnline(
            T - 3 * HOUR,
            [{ _tag: "reject", at: T - 3 * HOUR }],
            false
          )
          const orphanRunning = yield* givenOnline(T - 5 * HOUR, [], false)
          const links = [linkWaiting, linkAtCutoff, linkRecent, linkPaid, linkFailed, linkTimedOut]
          const online = [challenge, approved, expired, intentStuck, orphanDecided, orphanRunning]
          const transactions = [...links, ...online].map((p) => p.transactionId)
          yield* Projection.catchUp(ReadModels.paymentsInFlight)

          expect(yield* dueInFlight(transactions, cutoff)).toEqual([
            { kind: "online", transactionId: orphanRunning.transactionId, startedAt: T - 5 * HOUR },
            { kind: "online", transactionId: intentStuck.transactionId, startedAt: T - 4 * HOUR },
            { kind: "online", transactionId: challenge.transactionId, startedAt: T - 3 * HOUR },
            { kind: "link", transactionId: linkWaiting.transactionId, startedAt: T - 2 * HOUR },
            { kind: "link", transactionId: linkAtCutoff.transactionId, startedAt: cutoff }
          ])
          expect(yield* dueInFlight(transactions, cutoff)).toEqual(
            yield* inFlightByTheLog(links, online, cutoff)
          )
          expect(yield* dueInFlight(transactions, cutoff - 1)).toHaveLength(4)
          expect((yield* dueInFlight(transactions, T)).map((p) => p.transactionId)).toContain(
            linkRecent.transactionId
          )
          const duePayment = (yield* ReadModels.duePayments({
            startedBefore: instant(cutoff),
            limit: 1_000_000
          })).find((p) => p.transactionId === linkWaiting.transactionId)
          expect(duePayment).toMatchObject({
            kind: "link",
            linkId: Option.some(linkWaiting.linkId),
            paymentMethod: "CREDIT_CARD"
          })

          // The sweeper's decisions take them out; a rebuild from the log gives the same rows.
          yield* handleLink(
            linkWaiting.linkId,
            new PaymentLink.ExpirePayment({
              transactionId: linkWaiting.transactionId,
              timeout: Payment.ABANDONED_PAYMENT_TIMEOUT,
              now: instant(T)
            })
          )
          yield* handlePayment(
            challenge.transactionId,
            new Payment.ExpirePayment({ timeout: Payment.ABANDONED_PAYMENT_TIMEOUT, now: instant(T) })
          )
          yield* Projection.catchUp(ReadModels.paymentsInFlight)
          const sql = yield* SqlClient.SqlClient
          const rows = yield* sql<{ transaction_id: string; payment_open: boolean; intent_open: boolean }>`
              SELECT transaction_id, payment_open, intent_open FROM cobro_rm_payments_in_flight
              WHERE transaction_id IN ${sql.in([challenge.transactionId, intentStuck.transactionId])}
              ORDER BY transaction_id`
          // The expired challenge's intent has not been told yet: it stays in sight, as the stuck one.
          expect(rows).toHaveLength(2)
          expect(rows.every((r) => !r.payment_open && r.intent_open)).toBe(true)
          yield* handleIntent(
            challenge.key,
            new PaymentIntent.FailPayment({ transactionId: challenge.transactionId, now: instant(T) })
          )
          yield* Projection.catchUp(ReadModels.paymentsInFlight)
          expect((yield* dueInFlight(transactions, T)).map((p) => p.transactionId)).toEqual([
            orphanRunning.transactionId,
            intentStuck.transactionId,
            linkAtCutoff.transactionId,
            linkRecent.transactionId
          ])
          const before = yield* sql`SELECT * FROM cobro_rm_payments_in_flight ORDER BY kind, transaction_id`
          yield* Projection.rebuild(ReadModels.paymentsInFlight)
          expect(yield* sql`SELECT * FROM cobro_rm_payments_in_flight ORDER BY kind, transaction_id`).toEqual(
            before
          )
        })
    )

    it.effect("a round's limit takes the oldest payments first", () =>
      Effect.gen(function* () {
        const payments: Array<TransactionId> = []
        for (let i = 5; i >= 1; i--)
          payments.push((yield* givenLinkPayment(T - 20 * HOUR - i * HOUR)).transactionId)
        yield* Projection.catchUp(ReadModels.paymentsInFlight)
        expect((yield* dueInFlight(payments, T)).map((p) => p.transactionId)).toEqual(payments)
        expect(yield* ReadModels.duePayments({ startedBefore: instant(T), limit: 2 })).toHaveLength(2)
      })
    )

    if (name === "PGlite") {
      const onlineStep = FastCheck.constantFrom(
        "challenge" as const,
        "approve" as const,
        "reject" as const,
        "expire" as const,
        "intentPaid" as const,
        "intentFailed" as const
      )
      const onlineSpec = FastCheck.record({
        startedAgo: FastCheck.integer({ min: 0, max: 4 * 3600 }),
        withIntent: FastCheck.boolean(),
        steps: FastCheck.array(FastCheck.tuple(onlineStep, FastCheck.integer({ min: 0, max: 3600 })), {
          maxLength: 4
        })
      })
      const linkSpec = FastCheck.record({
        startedAgo: FastCheck.integer({ min: 0, max: 4 * 3600 }),
        end: FastCheck.option(
          FastCheck.tuple(
            FastCheck.constantFrom("fail" as const, "pay" as const, "timeout" as const),
            FastCheck.integer({ min: 0, max: 3600 })
          ),
          { nil: undefined }
        )
      })
      it.effect.prop(
        "whatever happened to the payments, the read model lists exactly those the log says are under way since the cutoff, and a rebuild agrees",
        [
          FastCheck.array(linkSpec, { maxLength: 4 }),
          FastCheck.array(onlineSpec, { minLength: 1, maxLength: 4 }),
          FastCheck.integer({ min: 0, max: 5 * 3600 })
        ],
        ([linkSpecs, onlineSpecs, cutoffAgo]) =>
          Effect.gen(function* () {
            const base = T - 100 * HOUR
            const links = []
            for (const spec of linkSpecs) {
              const startedAt = base - spec.startedAgo * 1000
              links.push(
                yield* givenLinkPayment(
                  startedAt,
                  spec.end === undefined
                    ? undefined
                    : { _tag: spec.end[0], at: startedAt + spec.end[1] * 1000 }
                )
              )
            }
            const online = []
            for (const spec of onlineSpecs) {
              const startedAt = base - spec.startedAgo * 1000
              const steps = [...spec.steps]
                .sort((a, b) => a[1] - b[1])
                .map(([tag, after]): OnlineStep => ({ _tag: tag, at: startedAt + after * 1000 }))
              online.push(yield* givenOnline(startedAt, steps, spec.withIntent))
            }
            const transactions = [...links, ...online].map((p) => p.transactionId)
            yield* Projection.catchUp(ReadModels.paymentsInFlight)
            const cutoff = base - cutoffAgo * 1000
            const expected = yield* inFlightByTheLog(links, online, cutoff)
            expect(yield* dueInFlight(transactions, cutoff)).toEqual(expected)
            yield* Projection.rebuild(ReadModels.paymentsInFlight)
            expect(yield* dueInFlight(transactions, cutoff)).toEqual(expected)
          }),
        { fastCheck: { numRuns: 25 } }
      )
    }
  })
}
