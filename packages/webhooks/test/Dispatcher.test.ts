import { describe, expect, it } from "@effect/vitest"
import * as CommandHandler from "@cobro/domain/CommandHandler"
import * as DeliveryAdmin from "@cobro/domain/DeliveryAdmin"
import * as DeliveryQueue from "@cobro/domain/DeliveryQueue"
import * as EventStore from "@cobro/domain/EventStore"
import * as IdGenerator from "@cobro/domain/IdGenerator"
import { NotificationId } from "@cobro/domain/Ids"
import * as InMemoryEventStore from "@cobro/domain/InMemoryEventStore"
import * as Merchant from "@cobro/domain/Merchant"
import * as Nanos from "@cobro/domain/Nanos"
import * as Notifications from "@cobro/domain/Notifications"
import * as Dispatcher from "@cobro/webhooks/Dispatcher"
import * as HttpTransport from "@cobro/webhooks/HttpTransport"
import * as Notifier from "@cobro/webhooks/Notifier"
import * as Signature from "@cobro/webhooks/Signature"
import * as Cause from "effect/Cause"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import type { YieldWrap } from "effect/Utils"
import * as WebhookDelivery from "@cobro/domain/WebhookDelivery"
import { createHmac, randomUUID } from "node:crypto"
import * as F from "@cobro/domain/testing/WebhookFixtures"
import * as R from "./support/Receiver.js"
import * as TestServices from "./support/Services.js"

const Services = TestServices.overLog()

type Receiver = Effect.Effect.Success<ReturnType<typeof R.receiver>>

/** What a test's body may yield: effects on the dispatcher's services, in the test's scope. */
type Step = YieldWrap<Effect.Effect<any, any, Layer.Layer.Success<typeof Services> | Scope.Scope>>

/** A test's body with the dispatcher's services over an in-memory log. */
const withServices =
  <Eff extends Step, A>(body: () => Generator<Eff, A, never>) =>
  () =>
    Effect.gen(body).pipe(Effect.provide(Services))

/** A test's body against a receiver over TLS (`rx`), with the dispatcher's services over an in-memory log. */
const withReceiver =
  <Eff extends Step, A>(body: (rx: Receiver) => Generator<Eff, A, never>) =>
  () =>
    Effect.flatMap(R.receiver({ tls: true }), (rx) => Effect.gen(() => body(rx))).pipe(
      Effect.provide(Services)
    )

const config: Dispatcher.Config = { owner: "dispatcher-1" }

/** What a second dispatcher claims now: the deliveries no live lease of the first holds. */
const claimedByAnother = Effect.flatMap(DeliveryQueue.DeliveryQueue, (queue) =>
  Effect.flatMap(DateTime.now, (now) =>
    queue.claim({ now, limit: 10, lease: Duration.seconds(30), owner: "dispatcher-2" })
  )
)

/** The notifier catches up with the log, then one dispatcher round runs. */
const step = (c: Dispatcher.Config = config) =>
  Effect.gen(function* () {
    yield* Notifier.catchUpFromLog(yield* Ref.make(EventStore.Start))
    return yield* Dispatcher.runOnce(c)
  })

/** A real-time pause (the test clock does not move by itself). */
const realSleep = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

const MIN = 60
const HOUR = 3600
/** The spec's retry delays, in seconds after the initial attempt. */
const RETRIES = [15 * MIN, HOUR, 4 * HOUR, 8 * HOUR, 24 * HOUR]

const notificationOf = (body: Buffer) =>
  (Either.getOrThrow(Nanos.parseJsonExact(body.toString("utf8"))) as { id: string }).id

const onlyDelivery = Effect.gen(function* () {
  const [scheduled] = yield* F.eventsOfType("DeliveryScheduled")
  return NotificationId.make((scheduled!.data as { notificationId: string }).notificationId)
})

/** At T0, MER_1 with its production webhook at `url`, and `count` approved sales. */
const sales = (url: string, count: number) =>
  Effect.gen(function* () {
    yield* F.setTime(0)
    yield* F.merchant("MER_1", { production: url })
    for (let n = 1; n <= count; n++) yield* F.approvedSale({ merchantId: "MER_1", n })
  })

const sale = (receiverUrl: string, setup: { sandbox?: boolean; standardWebhooks?: boolean } = {}) =>
  Effect.gen(function* () {
    const { sandbox = false, standardWebhooks = false } = setup
    yield* F.setTime(0)
    yield* F.merchant("MER_1", {
      ...(sandbox ? { test: receiverUrl } : { production: receiverUrl }),
      standardWebhooks
    })
    yield* F.approvedSale({ merchantId: "MER_1", n: 1, sandbox })
    yield* F.setTime(10)
  })

/** Given: a sale to `rx`, whose endpoint answers 500, and a dispatcher round: its first attempt failed. */
const firstAttemptFailed = (rx: Receiver) =>
  Effect.gen(function* () {
    rx.answer = () => ({ status: 500 })
    yield* sale(rx.url)
    yield* step()
  })

describe("Dispatcher", () => {
  describe("signature", () => {
    it.scoped(
      "the signature as received is openssl's HMAC-SHA256 of the Base64 of the received bytes",
      withReceiver(function* (rx) {
        yield* sale(rx.url)
        expect(yield* step()).toBe(1)
        expect(rx.received).toHaveLength(1)
        const [request] = rx.received
        const header = request!.headers[Signature.HEADER] as string
        expect(header).toBe(R.opensslSignature(request!.body, "secret-1"))
        expect(Signature.verifySignature(request!.body, header, "secret-1")).toBe(true)
        expect(Signature.verifySignature(request!.body, header, "secret-2")).toBe(false)
        // Re-serialized JSON is not what was signed (and rounds nothing here, but changes bytes).
        const reserialized = JSON.stringify(JSON.parse(request!.body.toString("utf8")), null, 1)
        expect(Signature.verifySignature(reserialized, header, "secret-1")).toBe(false)
        expect(request!.headers["content-type"]).toBe("application/json")
        const view = yield* DeliveryAdmin.listAttempts(yield* onlyDelivery)
        expect(request!.body.toString("utf8")).toBe(view.body)
        expect(view.status).toBe("DELIVERED")
        expect(view.attempts.map((a) => [a.attempt, a.statusCode, a.delivered])).toEqual([
          [1, Option.some(200), true]
        ])
        expect(DateTime.toEpochMillis(view.attempts[0]!.at)).toBe(F.T0 + 10_000)
      })
    )

    it.scoped(
      "a sandbox notification is signed with the empty secret, checked by openssl",
      withServices(function* () {
        const rx = yield* R.receiver({ tls: false })
        yield* sale(rx.url, { sandbox: true })
        yield* step()
        const [request] = rx.received
        expect(request!.headers[Signature.HEADER]).toBe(R.opensslSignature(request!.body, ""))
      })
    )

    it.scoped(
      "a retry after a key rotation is signed with the new secret, same bytes (W9)",
      withReceiver(function* (rx) {
        yield* firstAttemptFailed(rx)
        yield* CommandHandler.make(Merchant.Merchant)(
          "MER_1",
          new Merchant.RotateKey({
            integration: "terminal_api",
            mode: "production",
            keyPair: F.pair(7),
            now: yield* DateTime.now
          })
        )
        yield* F.setTime(10 + 15 * MIN)
        yield* step()
        const [first, second] = rx.received
        expect(second!.body.equals(first!.body)).toBe(true)
        expect(second!.headers[Signature.HEADER]).toBe(R.opensslSignature(second!.body, "secret-7"))
      })
    )

    it.scoped(
      "the Standard Webhooks headers are sent to an endpoint registered with them",
      withReceiver(function* (rx) {
        yield* sale(rx.url, { standardWebhooks: true })
        yield* step()
        const [request] = rx.received
        const id = request!.headers["webhook-id"] as string
        const timestamp = request!.headers["webhook-timestamp"] as string
        expect(id).toBe(notificationOf(request!.body))
        expect(timestamp).toBe(String((F.T0 + 10_000) / 1000))
        const expected = createHmac("sha256", "secret-1")
          .update(Buffer.concat([Buffer.from(`${id}.${timestamp}.`), request!.body]))
          .digest("base64")
        expect(request!.headers["webhook-signature"]).toBe(`v1,${expected}`)
        expect(R.opensslSignature(request!.body, "secret-1")).toBe(request!.headers[Signature.HEADER])
      })
    )

    it.scoped(
      "the Standard Webhooks headers are each endpoint's choice, as registered at the attempt: on for one, off for another, off again after re-registering",
      withReceiver(function* (rx) {
        const standard = (i: number) =>
          ["webhook-id", "webhook-timestamp", "webhook-signature"].filter(
            (h) => rx.received[i]!.headers[h] !== undefined
          )
        const merchants = CommandHandler.make(Merchant.Merchant)
        const setWebhook = (mode: "production" | "test", url: string, standardWebhooks = false) =>
          Effect.flatMap(DateTime.now, (now) =>
            merchants("MER_1", new Merchant.SetWebhook({ mode, url, standardWebhooks, now }))
          )
        yield* F.setTime(0)
        yield* F.merchant("MER_1", {})
        yield* setWebhook("production", `${rx.url}/prod`, true)
        yield* setWebhook("test", `${rx.url}/test`)
        yield* F.approvedSale({ merchantId: "MER_1", n: 1 })
        yield* F.approvedSale({ merchantId: "MER_1", n: 2, sandbox: true })
        yield* F.setTime(10)
        expect(yield* step()).toBe(2)
        const byPath = (path: string) => rx.received.findIndex((r) => r.path === path)
        expect(standard(byPath("/hook/prod"))).toHaveLength(3)
        expect(standard(byPath("/hook/test"))).toEqual([])
        // Re-registered without them (same URL): the next notification has the spec's header only.
        yield* setWebhook("production", `${rx.url}/prod`, false)
        yield* F.approvedSale({ merchantId: "MER_1", n: 3 })
        yield* F.setTime(20)
        expect(yield* step()).toBe(1)
        expect(rx.received[2]!.path).toBe("/hook/prod")
        expect(standard(2)).toEqual([])
        expect(rx.received[2]!.headers[Signature.HEADER]).toBe(
          R.opensslSignature(rx.received[2]!.body, "secret-1")
        )
      })
    )
  })

  describe("retries", () => {
    it.scoped(
      "retries are made at 15 min, 1 h, 4 h, 8 h and 24 h after the initial attempt, then EXHAUSTED",
      withReceiver(function* (rx) {
        rx.answer = () => ({ status: 500, body: "boom" })
        yield* sale(rx.url)
        yield* step()
        expect(rx.received).toHaveLength(1)
        for (const [i, delay] of RETRIES.entries()) {
          yield* F.setTime(10 + delay - 1)
          yield* step()
          expect(rx.received).toHaveLength(i + 1)
          yield* F.setTime(10 + delay)
          yield* step()
          expect(rx.received).toHaveLength(i + 2)
        }
        yield* F.setTime(10 + 72 * HOUR)
        yield* step()
        expect(rx.received).toHaveLength(6)
        const view = yield* DeliveryAdmin.listAttempts(yield* onlyDelivery)
        expect(view.status).toBe("EXHAUSTED")
        expect(view.attempts.map((a) => DateTime.toEpochMillis(a.at) - F.T0 - 10_000)).toEqual(
          [0, ...RETRIES].map((s) => s * 1000)
        )
        expect(view.attempts.every((a) => Option.contains(a.statusCode, 500) && a.snippet === "boom")).toBe(
          true
        )
        // Every attempt carries the same notification id and bytes.
        expect(new Set(rx.received.map((r) => r.body.toString("utf8"))).size).toBe(1)
      })
    )

    const failures: ReadonlyArray<
      readonly [
        string,
        (rx: { answer: (r: R.Received) => R.Answer }) => void,
        (snippet: string, status: Option.Option<number>) => void
      ]
    > = [
      [
        "a 500",
        (rx) => (rx.answer = () => ({ status: 500 })),
        (_, status) => expect(status).toEqual(Option.some(500))
      ],
      [
        "a 201, which is not 200",
        (rx) => (rx.answer = () => ({ status: 201 })),
        (_, status) => expect(status).toEqual(Option.some(201))
      ],
      [
        "a timeout past 2 s",
        (rx) => (rx.answer = () => ({ status: 200, delayMs: 2500 })),
        (snippet, status) => {
          expect(status).toEqual(Option.none())
          expect(snippet).toMatch(/timeout/)
        }
      ]
    ]
    for (const [name, fail, check] of failures) {
      it.scoped(
        `${name} fails the attempt: retry 1 is due 15 minutes after it`,
        withReceiver(function* (rx) {
          fail(rx)
          yield* sale(rx.url)
          yield* step()
          const id = yield* onlyDelivery
          const failed = yield* DeliveryAdmin.listAttempts(id)
          expect(failed.status).toBe("PENDING")
          check(failed.attempts[0]!.snippet, failed.attempts[0]!.statusCode)
          expect(failed.nextDueAt).toEqual(Option.some(F.at(10 + 15 * MIN)))
          rx.answer = () => ({ status: 200 })
          yield* F.setTime(10 + 15 * MIN - 1)
          yield* step()
          expect(rx.received).toHaveLength(1)
          yield* F.setTime(10 + 15 * MIN)
          yield* step()
          expect(rx.received).toHaveLength(2)
          const delivered = yield* DeliveryAdmin.listAttempts(id)
          expect(delivered.status).toBe("DELIVERED")
          expect(delivered.attempts.map((a) => a.delivered)).toEqual([false, true])
        })
      )
    }

    it.scoped(
      "a refused connection fails the attempt: retry 1 is due 15 minutes after it",
      withServices(function* () {
        const url = yield* R.closedPortUrl(true)
        yield* sale(url)
        yield* step()
        const id = yield* onlyDelivery
        const failed = yield* DeliveryAdmin.listAttempts(id)
        expect(failed.attempts[0]!.statusCode).toEqual(Option.none())
        expect(failed.attempts[0]!.snippet).toMatch(/refused/)
        yield* F.setTime(10 + 15 * MIN - 1)
        yield* step()
        expect((yield* DeliveryAdmin.listAttempts(id)).attempts).toHaveLength(1)
        yield* F.setTime(10 + 15 * MIN)
        yield* step()
        expect((yield* DeliveryAdmin.listAttempts(id)).attempts).toHaveLength(2)
      })
    )
  })

  describe("administration", () => {
    it.scoped(
      "an administrator re-sends an EXHAUSTED notification: the same id and bytes are delivered",
      withReceiver(function* (rx) {
        rx.answer = () => ({ status: 503 })
        yield* sale(rx.url)
        yield* step()
        for (const delay of RETRIES) {
          yield* F.setTime(10 + delay)
          yield* step()
        }
        const id = yield* onlyDelivery
        expect((yield* DeliveryAdmin.listAttempts(id)).status).toBe("EXHAUSTED")
        rx.answer = () => ({ status: 200 })
        yield* F.setTime(10 + 30 * HOUR)
        const resent = yield* DeliveryAdmin.resend(id)
        expect(resent.status).toBe("PENDING")
        yield* step()
        expect(rx.received).toHaveLength(7)
        expect(rx.received[6]!.body.equals(rx.received[0]!.body)).toBe(true)
        expect(notificationOf(rx.received[6]!.body)).toBe(id)
        const view = yield* DeliveryAdmin.listAttempts(id)
        expect(view.status).toBe("DELIVERED")
        expect(view.attempts).toHaveLength(7)
      })
    )

    it.scoped(
      "a PENDING notification is not re-sent: it is already scheduled",
      withReceiver(function* (rx) {
        yield* firstAttemptFailed(rx)
        const error = yield* Effect.flip(DeliveryAdmin.resend(yield* onlyDelivery))
        expect(error._tag).toBe("DeliveryNotInState")
      })
    )

    it.scoped(
      "deleting the webhook stops delivery: the next retry is cancelled, nothing is sent",
      withReceiver(function* (rx) {
        yield* firstAttemptFailed(rx)
        yield* F.deleteWebhook("MER_1", "production")
        yield* F.setTime(10 + 15 * MIN)
        yield* step()
        expect(rx.received).toHaveLength(1)
        expect((yield* DeliveryAdmin.listAttempts(yield* onlyDelivery)).status).toBe("CANCELLED")
      })
    )
  })

  describe("isolation", () => {
    it.scoped(
      "each merchant and each mode receives only its own notifications, signed with its own key",
      withServices(function* () {
        const prod1 = yield* R.receiver({ tls: true })
        const test1 = yield* R.receiver({ tls: false })
        const prod2 = yield* R.receiver({ tls: true })
        yield* F.setTime(0)
        yield* F.merchant("MER_1", { production: prod1.url, test: test1.url })
        yield* F.merchant("MER_2", { production: prod2.url, keyBase: 10 })
        yield* F.approvedSale({ merchantId: "MER_1", n: 1 })
        yield* F.approvedSale({ merchantId: "MER_1", n: 2, sandbox: true })
        yield* F.approvedSale({ merchantId: "MER_2", n: 3 })
        yield* step()
        const subjects = (rx: { received: Array<R.Received> }) =>
          rx.received.map((r) => (JSON.parse(r.body.toString("utf8")) as { subject: string }).subject)
        expect(subjects(prod1)).toEqual(["TRX_1"])
        expect(subjects(test1)).toEqual(["TRX_2"])
        expect(subjects(prod2)).toEqual(["TRX_3"])
        const signedWith = (r: R.Received, secret: string) =>
          r.headers[Signature.HEADER] === R.opensslSignature(r.body, secret)
        expect(signedWith(prod1.received[0]!, "secret-1")).toBe(true)
        expect(signedWith(test1.received[0]!, "")).toBe(true)
        expect(signedWith(prod2.received[0]!, "secret-11")).toBe(true)
      })
    )
  })

  describe("leases", () => {
    it.scoped(
      "a lease too short to cover an attempt is refused before anything is claimed",
      withReceiver(function* (rx) {
        yield* sale(rx.url)
        yield* Notifier.catchUpFromLog(yield* Ref.make(EventStore.Start))
        // 2 s to answer plus 1 s to record: a lease of 2.999 s cannot cover one attempt.
        const short = yield* Effect.exit(Dispatcher.runOnce({ ...config, lease: Duration.millis(2999) }))
        expect(Exit.isFailure(short) && Cause.isDie(short.cause)).toBe(true)
        expect(Exit.isFailure(short) ? Cause.pretty(short.cause) : "").toMatch(/cannot cover an attempt/)
        expect(rx.received).toHaveLength(0)
        // Nothing was claimed: a dispatcher whose lease just covers an attempt takes it at once.
        expect(
          yield* Dispatcher.runOnce({ ...config, owner: "dispatcher-2", lease: Duration.millis(3000) })
        ).toBe(1)
        expect(rx.received).toHaveLength(1)
      })
    )

    it.scoped(
      "an idle dispatcher claims at once when woken or when a batch is done, and backs off from 25 ms to pollInterval while claims stay empty",
      withReceiver(function* (rx) {
        yield* sales(rx.url, 0)
        const checkpoint = yield* Ref.make(EventStore.Start)
        const wake = yield* Queue.unbounded<void>()
        const claims = yield* Ref.make(0)
        const queue = yield* DeliveryQueue.DeliveryQueue
        // The queue counted: how many rounds ran.
        const counted = DeliveryQueue.DeliveryQueue.of({
          ...queue,
          claim: (options) =>
            Effect.zipRight(
              Ref.update(claims, (n) => n + 1),
              queue.claim(options)
            )
        })
        // The test clock never moves by itself: only a wake-up or an adjustment lets a sleep end.
        yield* Effect.forkScoped(
          Dispatcher.run({
            ...config,
            pollInterval: Duration.seconds(1),
            wakeups: Stream.fromQueue(wake)
          }).pipe(Effect.provideService(DeliveryQueue.DeliveryQueue, counted))
        )
        const settle = realSleep(100)
        yield* settle
        expect(yield* Ref.get(claims)).toBe(1)
        // Empty rounds back off: 25, 50, 100 ms of the test clock.
        yield* TestClock.adjust(Duration.millis(25))
        yield* settle
        expect(yield* Ref.get(claims)).toBe(2)
        yield* TestClock.adjust(Duration.millis(49))
        yield* settle
        expect(yield* Ref.get(claims)).toBe(2)
        yield* TestClock.adjust(Duration.millis(1))
        yield* settle
        expect(yield* Ref.get(claims)).toBe(3)
        // A sale arrives; the wake-up starts a round at once, without any clock movement.
        yield* F.approvedSale({ merchantId: "MER_1", n: 1 })
        yield* Notifier.catchUpFromLog(checkpoint)
        yield* Queue.offer(wake, undefined)
        for (let i = 0; i < 100 && rx.received.length < 1; i++) yield* realSleep(50)
        // Delivered, though the pending sleep (100 ms of a clock that did not move) never ended.
        expect(rx.received).toHaveLength(1)
        // After that claim with work, the next one ran at once and found nothing, and another once its
        // batch was done; then 25 ms again.
        yield* settle
        expect(yield* Ref.get(claims)).toBe(6)
        yield* TestClock.adjust(Duration.millis(25))
        yield* settle
        expect(yield* Ref.get(claims)).toBe(7)
      })
    )

    it.scoped(
      "claims follow each other while work arrives: no poll sleep after a batch is done",
      withReceiver(function* (rx) {
        rx.answer = () => ({ status: 200, delayMs: 300 })
        yield* sales(rx.url, 3)
        const checkpoint = yield* Ref.make(EventStore.Start)
        yield* Notifier.catchUpFromLog(checkpoint)
        // The poll interval is an hour of the test clock, which never moves here: only a round that
        // starts at once after the first one can deliver what arrives during it.
        yield* Effect.forkScoped(
          Dispatcher.run({ ...config, batchSize: 10, pollInterval: Duration.hours(1) })
        )
        const received = (count: number) =>
          Effect.gen(function* () {
            for (let i = 0; i < 400 && rx.received.length < count; i++) yield* realSleep(50)
            return rx.received.length
          })
        expect(yield* received(1)).toBeGreaterThanOrEqual(1)
        for (let n = 4; n <= 5; n++) yield* F.approvedSale({ merchantId: "MER_1", n })
        yield* Notifier.catchUpFromLog(checkpoint)
        expect(yield* received(5)).toBe(5)
        expect(new Set(rx.received.map((r) => notificationOf(r.body))).size).toBe(5)
      })
    )

    it("an attempt may start until the lease's end minus the answer time and the time to record it", () => {
      expect(Dispatcher.startDeadline(1_000_000, { owner: "d" })).toBe(1_000_000 + 30_000 - 2_000 - 1_000)
      expect(
        Dispatcher.startDeadline(1_000_000, { owner: "d", lease: Duration.seconds(10), timeoutMs: 500 })
      ).toBe(1_000_000 + 10_000 - 500 - Dispatcher.REPORT_MARGIN_MILLIS)
    })

    it.scoped(
      "past its start deadline an attempt is not sent: LeaseEnding, nothing recorded",
      withReceiver(function* (rx) {
        yield* sale(rx.url)
        yield* Notifier.catchUpFromLog(yield* Ref.make(EventStore.Start))
        const id = yield* onlyDelivery
        const now = DateTime.toEpochMillis(yield* DateTime.now)
        expect(yield* Dispatcher.attempt(id, config, now - 1)).toEqual({ _tag: "LeaseEnding" })
        expect(rx.received).toHaveLength(0)
        expect((yield* DeliveryAdmin.listAttempts(id)).attempts).toHaveLength(0)
        expect(yield* Dispatcher.attempt(id, config, now)).toMatchObject({ _tag: "Attempted", attempt: 1 })
        expect(rx.received).toHaveLength(1)
      })
    )
  })

  describe("sharing work", () => {
    it.scoped(
      "two dispatchers on one queue attempt each notification once",
      withReceiver(function* (rx) {
        rx.answer = () => ({ status: 200, delayMs: 50 })
        yield* sales(rx.url, 6)
        yield* Notifier.catchUpFromLog(yield* Ref.make(EventStore.Start))
        const round = (owner: string) => Dispatcher.runOnce({ owner, batchSize: 2 })
        while (true) {
          const [a, b] = yield* Effect.all([round("d1"), round("d2")], { concurrency: 2 })
          if (a + b === 0) break
        }
        const ids = rx.received.map((r) => notificationOf(r.body))
        expect(ids).toHaveLength(6)
        expect(new Set(ids).size).toBe(6)
      })
    )

    it.scoped(
      "the notifier run twice over the log schedules each notification once",
      withReceiver(function* (rx) {
        yield* sale(rx.url)
        yield* Notifier.catchUpFromLog(yield* Ref.make(EventStore.Start))
        yield* Notifier.catchUpFromLog(yield* Ref.make(EventStore.Start))
        expect(yield* F.eventsOfType("DeliveryScheduled")).toHaveLength(1)
        const [source] = yield* F.eventsOfType("SaleApproved")
        expect(yield* onlyDelivery).toBe(Notifications.notificationIdOf(source!.eventId))
      })
    )
  })

  describe("recording in batches", () => {
    /** Sales `TRX_1`…`TRX_<count>` of MER_1 and their deliveries scheduled. */
    const sales = (url: string, count: number) =>
      Effect.gen(function* () {
        yield* F.setTime(0)
        yield* F.merchant("MER_1", { production: url })
        for (let n = 1; n <= count; n++) yield* F.approvedSale({ merchantId: "MER_1", n })
        yield* Notifier.catchUpFromLog(yield* Ref.make(EventStore.Start))
      })

    /** Every delivery stream's attempt events. */
    const attemptsPerDelivery = Effect.gen(function* () {
      const store = yield* EventStore.EventStore
      const scheduled = yield* F.eventsOfType("DeliveryScheduled")
      return yield* Effect.forEach(scheduled, (event) =>
        Effect.map(store.readStream(event.streamId), (events) =>
          events.filter((e) => e.type === "AttemptSucceeded" || e.type === "AttemptFailed")
        )
      )
    })

    const realDelay = (ms: number) =>
      Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, ms)))

    /**
     * The in-memory store with its writes counted and each `appendBatch` slowed down (a round trip),
     * so that attempts answered meanwhile wait for the next one; `interlope(items)` may run first.
     */
    const slowStore = (
      interlope?: (
        items: ReadonlyArray<EventStore.BatchAppend>
      ) => Effect.Effect<unknown, unknown, EventStore.EventStore | IdGenerator.IdGenerator> | undefined
    ) => {
      const counts = {
        append: 0,
        appendBatch: 0,
        batched: [] as Array<number>,
        failed: 0,
        deliveryReads: 0,
        readStreams: [] as Array<number>
      }
      const layer = Layer.effect(
        EventStore.EventStore,
        Effect.map(InMemoryEventStore.make, (inner) =>
          EventStore.EventStore.of({
            ...inner,
            readStream: (streamId, options) =>
              Effect.suspend(() => {
                if (streamId.startsWith("WebhookDelivery-")) counts.deliveryReads++
                return inner.readStream(streamId, options)
              }),
            readStreams: (streamIds) =>
              Effect.suspend(() => {
                counts.readStreams.push(streamIds.length)
                return inner.readStreams(streamIds)
              }),
            append: (streamId, events, expected) =>
              Effect.suspend(() => {
                counts.append++
                return inner.append(streamId, events, expected)
              }),
            appendBatch: (items) =>
              Effect.gen(function* () {
                counts.appendBatch++
                counts.batched.push(items.length)
                yield* realDelay(100)
                const interloper = interlope?.(items)
                if (interloper !== undefined) {
                  yield* interloper.pipe(
                    Effect.provideService(EventStore.EventStore, inner),
                    // Ids of its own: the sequential ones of the test are taken.
                    Effect.provideService(IdGenerator.IdGenerator, {
                      next: (prefix) => Effect.sync(() => `${prefix}${randomUUID()}`),
                      uuid: Effect.sync(() => randomUUID())
                    }),
                    Effect.orDie
                  )
                }
                return yield* inner
                  .appendBatch(items)
                  .pipe(Effect.tapError(() => Effect.sync(() => counts.failed++)))
              })
          })
        )
      )
      return { counts, layer: TestServices.overLog(layer) }
    }

    it.scoped(
      "a round decides on the states its claim gives and its attempts share appends: no delivery stream read, fewer appends than attempts, each attempt recorded once",
      () => {
        const { counts, layer } = slowStore()
        return Effect.gen(function* () {
          const rx = yield* R.receiver({ tls: true })
          rx.answer = () => ({ status: 200, delayMs: 20 })
          yield* sales(rx.url, 12)
          const before = counts.append
          expect(yield* Dispatcher.runOnce(config)).toBe(12)
          expect(rx.received).toHaveLength(12)
          // The claim gave the 12 states: no delivery stream read, together or alone.
          expect(counts.readStreams).toEqual([])
          expect(counts.deliveryReads).toBe(0)
          // No attempt recorded alone; 12 attempts in fewer batches.
          expect(counts.append).toBe(before)
          expect(counts.batched.reduce((a, b) => a + b, 0)).toBe(12)
          expect(counts.appendBatch).toBeLessThan(12)
          const attempts = yield* attemptsPerDelivery
          expect(attempts.map((a) => a.map((e) => [e.type, e.streamVersion]))).toEqual(
            Array.from({ length: 12 }, () => [["AttemptSucceeded", 2]])
          )
          expect(attempts.flat().every((e) => e.metadata.actor === "dispatcher")).toBe(true)
        }).pipe(Effect.provide(layer))
      }
    )

    it.scoped(
      "a failed batch falls back to one append per attempt: every attempt still recorded once",
      () => {
        let cancelled: string | undefined
        // An administrator cancels one delivery of the first batch of several while its POST was answered.
        const { counts, layer } = slowStore((items) => {
          if (cancelled !== undefined || items.length < 2) return undefined
          cancelled = items[1]!.streamId
          return Effect.flatMap(DateTime.now, (now) =>
            CommandHandler.make(WebhookDelivery.WebhookDelivery)(
              cancelled!.replace("WebhookDelivery-", ""),
              new WebhookDelivery.CancelDelivery({ now })
            )
          )
        })
        return Effect.gen(function* () {
          const rx = yield* R.receiver({ tls: true })
          rx.answer = () => ({ status: 500, delayMs: 20 })
          yield* sales(rx.url, 8)
          expect(yield* Dispatcher.runOnce(config)).toBe(8)
          expect(cancelled).toBeDefined()
          expect(counts.failed).toBe(1)
          // Each attempt of the failed batch was then appended alone.
          expect(counts.append).toBeGreaterThanOrEqual(2)
          const attempts = yield* attemptsPerDelivery
          expect(attempts.map((a) => a.map((e) => e.type))).toEqual(
            Array.from({ length: 8 }, () => ["AttemptFailed"])
          )
          const store = yield* EventStore.EventStore
          // The cancelled one keeps its cancellation and the attempt that was in flight (no retry due).
          expect((yield* store.readStream(cancelled!)).map((e) => e.type)).toEqual([
            "DeliveryScheduled",
            "DeliveryCancelled",
            "AttemptFailed"
          ])
        }).pipe(Effect.provide(layer))
      }
    )

    it.scoped(
      "an attempt is recorded as soon as it is answered, not at the end of its round",
      withReceiver(function* (rx) {
        rx.answer = (request) => ({
          status: 200,
          delayMs: request.body.toString("utf8").includes("TRX_1") ? 0 : 1_500
        })
        yield* sales(rx.url, 2)
        const round = yield* Effect.fork(Dispatcher.runOnce(config))
        const recorded = () =>
          Effect.map(attemptsPerDelivery, (attempts) => attempts.filter((a) => a.length > 0).length)
        let seen = 0
        for (let i = 0; i < 100 && seen === 0; i++) {
          yield* realSleep(10)
          seen = yield* recorded()
        }
        // The fast one is in the log while the slow one is still unanswered.
        expect(seen).toBe(1)
        expect(rx.received).toHaveLength(2)
        expect(yield* Fiber.join(round)).toBe(2)
        expect(yield* recorded()).toBe(2)
      })
    )

    it.scoped(
      "an interrupted round gives its claims back",
      withReceiver(function* (rx) {
        rx.answer = () => ({ status: 200, delayMs: 1_500 })
        yield* sales(rx.url, 3)
        const round = yield* Effect.fork(Dispatcher.runOnce(config))
        for (let i = 0; i < 200 && rx.received.length < 3; i++) yield* realSleep(10)
        yield* Fiber.interrupt(round)
        expect(yield* claimedByAnother).toHaveLength(3)
      })
    )

    it.scoped("a round whose batch dies gives its claims back: another dispatcher takes them at once", () => {
      // The database goes away once the POSTs are sent: no attempt can be recorded.
      let down = false
      const layer = TestServices.overLog(
        Layer.effect(
          EventStore.EventStore,
          Effect.map(InMemoryEventStore.make, (inner) => {
            const lost = Effect.suspend(() =>
              down ? Effect.dieMessage("the database connection was lost") : Effect.void
            )
            return EventStore.EventStore.of({
              ...inner,
              append: (streamId, events, expected) =>
                Effect.zipRight(lost, inner.append(streamId, events, expected)),
              appendBatch: (items) => Effect.zipRight(lost, inner.appendBatch(items))
            })
          })
        )
      )
      return Effect.gen(function* () {
        const rx = yield* R.receiver({ tls: true })
        rx.answer = () => {
          down = true
          return { status: 200 }
        }
        yield* sales(rx.url, 3)
        yield* Dispatcher.runOnce(config)
        expect(rx.received).toHaveLength(3)
        down = false
        // Nothing was recorded: the three are due again, not held for the dead batch's lease.
        expect(yield* claimedByAnother).toHaveLength(3)
      }).pipe(Effect.provide(layer))
    })

    it.scoped(
      "releaseAll gives back the owner's claims, and only its own",
      withReceiver(function* (rx) {
        yield* sales(rx.url, 3)
        const queue = yield* DeliveryQueue.DeliveryQueue
        const now = yield* DateTime.now
        const lease = Duration.seconds(30)
        const ids = (claims: ReadonlyArray<DeliveryQueue.Claim>) => claims.map((c) => c.notificationId)
        const mine = ids(yield* queue.claim({ now, limit: 2, lease, owner: "d1" }))
        const theirs = ids(yield* queue.claim({ now, limit: 2, lease, owner: "d2" }))
        expect([mine.length, theirs.length]).toEqual([2, 1])
        yield* queue.releaseAll([mine[0]!, mine[1]!, theirs[0]!], "d1")
        expect(new Set(ids(yield* queue.claim({ now, limit: 10, lease, owner: "d3" })))).toEqual(
          new Set(mine)
        )
      })
    )
  })

  describe("Retry-After", () => {
    it("is read as delay-seconds or an HTTP date, a date past as 0, anything else as absent", () => {
      const now = Date.parse("2026-11-26T10:00:00Z")
      expect(HttpTransport.retryAfterMillis("120", now)).toBe(120_000)
      expect(HttpTransport.retryAfterMillis(" 0 ", now)).toBe(0)
      expect(HttpTransport.retryAfterMillis("Thu, 26 Nov 2026 10:30:00 GMT", now)).toBe(1_800_000)
      expect(HttpTransport.retryAfterMillis("Thu, 26 Nov 2026 09:00:00 GMT", now)).toBe(0)
      expect(HttpTransport.retryAfterMillis(["60", "120"], now)).toBe(60_000)
      for (const bad of [undefined, "", "-5", "1.5", "soon"]) {
        expect(HttpTransport.retryAfterMillis(bad, now)).toBeUndefined()
      }
    })
  })

  describe("endpoints", () => {
    /** Sales TRX_<from>… of `merchantId` (its webhook at `url`), their deliveries scheduled. */
    const salesTo = (merchantId: string, url: string, from: number, count: number, keyBase?: number) =>
      Effect.gen(function* () {
        yield* F.merchant(merchantId, { production: url, ...(keyBase === undefined ? {} : { keyBase }) })
        for (let n = from; n < from + count; n++) yield* F.approvedSale({ merchantId, n })
      })

    /** Each delivery's subject and its attempt events. */
    const attemptsBySubject = Effect.gen(function* () {
      const store = yield* EventStore.EventStore
      const scheduled = yield* F.eventsOfType("DeliveryScheduled")
      const bySubject = new Map<string, ReadonlyArray<EventStore.RecordedEvent>>()
      for (const event of scheduled) {
        const events = yield* store.readStream(event.streamId)
        bySubject.set(
          (event.data as { subject: string }).subject,
          events.filter((e) => e.type === "AttemptSucceeded" || e.type === "AttemptFailed")
        )
      }
      return bySubject
    })

    it.scoped(
      "a batch whose POSTs partly fail records each attempt exactly once, each failure with its retry",
      withReceiver(function* (rx) {
        // Odd transactions answered 500, even ones 200.
        rx.answer = (request) => ({
          status: Number(/TRX_(\d+)/.exec(request.body.toString("utf8"))![1]) % 2 === 1 ? 500 : 200
        })
        yield* F.setTime(0)
        yield* salesTo("MER_1", rx.url, 1, 10)
        // Nothing listens on port 1: the connection is refused.
        yield* salesTo("MER_2", "https://127.0.0.1:1/hooks", 11, 2, 20)
        expect(yield* step({ ...config, concurrency: 4 })).toBe(12)
        // Nothing is due again at once: a second round claims nothing.
        expect(yield* Dispatcher.runOnce(config)).toBe(0)
        expect(rx.received.map((r) => notificationOf(r.body)).sort()).toEqual(
          [...new Set(rx.received.map((r) => notificationOf(r.body)))].sort()
        )
        expect(rx.received).toHaveLength(10)
        const attempts = yield* attemptsBySubject
        expect(attempts.size).toBe(12)
        for (const [subject, events] of attempts) {
          const n = Number(subject.replace("TRX_", ""))
          expect(events).toHaveLength(1)
          const [event] = events
          expect(event!.type).toBe(n <= 10 && n % 2 === 0 ? "AttemptSucceeded" : "AttemptFailed")
          if (event!.type === "AttemptFailed") {
            const data = event!.data as {
              at: string
              nextDueAt: string
              outcome: { _tag: string; reason?: string }
            }
            expect(Date.parse(data.nextDueAt) - Date.parse(data.at)).toBe(RETRIES[0]! * 1000)
            if (n > 10) expect(data.outcome.reason).toMatch(/connection refused/)
          }
        }
      })
    )

    it.scoped(
      "a 429 with Retry-After moves that delivery's retry later, never past its round's last slot",
      withReceiver(function* (rx) {
        rx.answer = (request) => ({
          status: 429,
          headers: { "retry-after": request.body.toString("utf8").includes('TRX_1"') ? "3600" : "999999" }
        })
        yield* F.setTime(0)
        yield* salesTo("MER_1", rx.url, 1, 2)
        expect(yield* step()).toBe(2)
        const attempts = yield* attemptsBySubject
        const delay = (subject: string) => {
          const data = attempts.get(subject)![0]!.data as { at: string; nextDueAt: string }
          return (Date.parse(data.nextDueAt) - Date.parse(data.at)) / 1000
        }
        // An hour asked: later than the 15-minute slot. Eleven days asked: the round's last slot, 24 h.
        expect(delay("TRX_1")).toBe(HOUR)
        expect(delay("TRX_2")).toBe(RETRIES[4]!)
      })
    )

    it.scoped(
      "an endpoint that times out on every request does not delay another endpoint's deliveries beyond their own latency",
      withServices(function* () {
        const slow = yield* R.receiver({ tls: true })
        const fast = yield* R.receiver({ tls: true })
        // Never answered within the deadline.
        slow.answer = () => ({ status: 200, delayMs: 5_000 })
        yield* F.setTime(0)
        // The slow endpoint's deliveries come first in the queue, more than its cap many times over.
        yield* salesTo("MER_SLOW", slow.url, 1, 20)
        yield* salesTo("MER_FAST", fast.url, 21, 10, 20)
        yield* Notifier.catchUpFromLog(yield* Ref.make(EventStore.Start))
        const timeoutMs = 1_000
        const started = Date.now()
        const fiber = yield* Effect.forkScoped(
          Dispatcher.run({ ...config, concurrency: 8, perEndpoint: 2, timeoutMs })
        )
        for (let i = 0; i < 200 && fast.received.length < 10; i++) yield* realSleep(10)
        const fastDone = Date.now() - started
        expect(fast.received).toHaveLength(10)
        // The fast endpoint's ten, in well under one of the slow endpoint's timeouts; the slow one
        // has two requests in flight at a time, each timing out after a second.
        expect(fastDone).toBeLessThan(timeoutMs)
        expect(slow.received.length).toBeLessThanOrEqual(2)
        for (let i = 0; i < 300 && slow.received.length < 6; i++) yield* realSleep(10)
        expect(slow.received.length).toBeGreaterThanOrEqual(4)
        expect(slow.received.length).toBeLessThanOrEqual(6)
        yield* Fiber.interrupt(fiber)
      }),
      20_000
    )
  })
})
