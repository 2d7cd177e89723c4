/**
 * The webhook read models written with their events (the store's triggers, whatever the appends'
 * grouping) hold exactly the rows that a rebuild from the log writes, on PGlite and PostgreSQL, and
 * a projection with `applyBatch` runs as a batch consumer of the log.
 */
import * as Aggregate from "@cobro/domain/Aggregate"
import * as EventStore from "@cobro/domain/EventStore"
import * as WebhookDelivery from "@cobro/domain/WebhookDelivery"
import { expect } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { randomUUID } from "node:crypto"
import * as Projection from "../src/Projection.js"
import * as ReadModels from "../src/ReadModels.js"
import * as WebhookDeliveries from "../src/readModels/WebhookDeliveries.js"
import * as Databases from "./support/Databases.js"
import { storeSuite } from "./support/StoreTest.js"

const encode = Schema.encodeSync(WebhookDelivery.Event)
const at = (seconds: number) => DateTime.unsafeMake(Date.UTC(2026, 10, 21) + seconds * 1000)

/** One generated WebhookDelivery event: which of a few streams, and what it is. */
type Step =
  | {
      readonly kind: "scheduled"
      readonly stream: number
      readonly subject: number
      readonly reference: boolean
    }
  | {
      readonly kind: "succeeded" | "failed" | "failedLast" | "exhausted" | "resend" | "cancelled"
      readonly stream: number
    }

const step: FastCheck.Arbitrary<Step> = FastCheck.oneof(
  FastCheck.record({
    kind: FastCheck.constant("scheduled" as const),
    stream: FastCheck.nat(5),
    subject: FastCheck.nat(3),
    reference: FastCheck.boolean()
  }),
  FastCheck.record({
    kind: FastCheck.constantFrom(
      "succeeded" as const,
      "failed" as const,
      "failedLast" as const,
      "exhausted" as const,
      "resend" as const,
      "cancelled" as const
    ),
    stream: FastCheck.nat(5)
  })
)

/** The steps as logged events of `run`'s streams (the projections decode `data`, nothing else). */
const toEvents = (run: string, steps: ReadonlyArray<Step>): ReadonlyArray<EventStore.LoggedEvent> => {
  const versions = new Map<number, number>()
  return steps.map((step, i) => {
    // A stream's first event is its DeliveryScheduled, as in any log the decider writes.
    const s: Step =
      versions.has(step.stream) || step.kind === "scheduled"
        ? step
        : { kind: "scheduled", stream: step.stream, subject: step.stream % 4, reference: true }
    const version = (versions.get(s.stream) ?? 0) + 1
    versions.set(s.stream, version)
    const when = at(i)
    const event: WebhookDelivery.Event = (() => {
      switch (s.kind) {
        case "scheduled":
          return new WebhookDelivery.DeliveryScheduled({
            notificationId: randomUUID() as never,
            merchantId: "MER_batch" as never,
            url: "https://merchant.example/hook",
            type: "SALE_APPROVED",
            subject: `TRX_${run}${s.subject}` as never,
            body: JSON.stringify({
              data: { metadata: s.reference ? { reference: `ref-${s.subject % 2}` } : {} }
            }),
            signingKey: "EMPTY",
            sandbox: s.subject % 2 === 0,
            dueAt: when,
            createdAt: when
          })
        case "succeeded":
          return new WebhookDelivery.AttemptSucceeded({
            attempt: version,
            at: when,
            statusCode: 200,
            snippet: "ok",
            latencyMs: 3
          })
        case "failed":
        case "failedLast":
          return new WebhookDelivery.AttemptFailed({
            attempt: version,
            at: when,
            outcome: { _tag: "Failed", reason: "refused" },
            latencyMs: 1,
            nextDueAt: s.kind === "failed" ? Option.some(at(i + 900)) : Option.none()
          })
        case "exhausted":
          return new WebhookDelivery.DeliveryExhausted({ at: when })
        case "resend":
          return new WebhookDelivery.ResendRequested({ url: "https://merchant.example/hook", at: when })
        case "cancelled":
          return new WebhookDelivery.DeliveryCancelled({ at: when })
      }
    })()
    const position = BigInt(i + 1)
    return {
      eventId: randomUUID(),
      type: event._tag,
      schemaVersion: 1,
      data: encode(event),
      metadata: {},
      globalPosition: position,
      streamId: Aggregate.streamId(WebhookDelivery.WebhookDelivery, `${run}-${s.stream}`),
      streamVersion: version,
      recordedAt: new Date(),
      prevHash: "",
      hash: "",
      checkpoint: { transactionId: 1n, globalPosition: position }
    }
  })
}

const projections = [
  ReadModels.webhookDeliveries,
  ReadModels.lastNotification,
  ReadModels.lastNotificationByReference
] as const

/** A projection's rows of this run (its tables hold other tests' rows too), as text. */
const rowsOf = (run: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.all([
      sql`SELECT stream_id, notification_id::text, merchant_id, subject, status, attempts, due_at::text, version
          FROM cobro_rm_webhook_deliveries WHERE subject LIKE ${`TRX_${run}%`} ORDER BY stream_id`,
      sql`SELECT subject, notification_id::text, type, merchant_id, stream_id, created_at::text,
            log_position::text
          FROM cobro_rm_last_notification WHERE subject LIKE ${`TRX_${run}%`} ORDER BY subject`,
      sql`SELECT subject, merchant_id, sandbox, reference, notification_id::text, type, stream_id, created_at::text,
            log_position::text
          FROM cobro_rm_last_notification_by_reference WHERE subject LIKE ${`TRX_${run}%`} ORDER BY subject`
    ])
  ).pipe(Effect.orDie)

/** Cuts `events` into consecutive batches at the given cut points. */
const cut = <A>(events: ReadonlyArray<A>, cuts: ReadonlyArray<number>): ReadonlyArray<ReadonlyArray<A>> => {
  const points = [...new Set(cuts.map((c) => c % (events.length + 1)))].sort((a, b) => a - b)
  const batches: Array<ReadonlyArray<A>> = []
  let from = 0
  for (const point of [...points, events.length]) {
    batches.push(events.slice(from, point))
    from = point
  }
  return batches
}

const suite = (name: string, database: Layer.Layer<Databases.StoreServices>, runs: number) =>
  storeSuite(database, "120 seconds")(name, (it) => {
    it.effect.prop(
      "the webhook read models written with their events, in appends of any grouping, equal their rebuild from the log",
      [
        FastCheck.array(step, { minLength: 1, maxLength: 40 }),
        FastCheck.array(FastCheck.nat(40), { maxLength: 6 })
      ],
      ([steps, cuts]) =>
        Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          const run = randomUUID().replaceAll("-", "").slice(0, 12)
          // The events, appended in commits cut at random: each commit one appendBatch over its streams.
          for (const commit of cut(toEvents(run, steps), cuts)) {
            if (commit.length === 0) continue
            const byStream = new Map<string, Array<EventStore.LoggedEvent>>()
            for (const event of commit)
              byStream.set(event.streamId, [...(byStream.get(event.streamId) ?? []), event])
            yield* store.appendBatch(
              [...byStream].map(([streamId, events]) => ({
                streamId,
                expected: EventStore.ExpectedVersion.Exact({ version: events[0]!.streamVersion - 1 }),
                events: events.map(({ data, eventId, metadata, schemaVersion, type }) => ({
                  eventId,
                  type,
                  schemaVersion,
                  data,
                  metadata
                }))
              }))
            )
          }
          const written = yield* rowsOf(run)
          expect(written[0]!.length).toBe(new Set(toEvents(run, steps).map((e) => e.streamId)).size)
          yield* Projection.rebuildAll(projections)
          expect(yield* rowsOf(run)).toEqual(written)
        }).pipe(Effect.orDie),
      { fastCheck: { numRuns: runs } }
    )

    it("the delivery read model's trigger fires on every WebhookDelivery event type, and no other", () => {
      const all = (WebhookDelivery.Event.members as ReadonlyArray<{ readonly _tag: string }>).map(
        (m) => m._tag
      )
      expect([...WebhookDeliveries.model.types].sort()).toEqual([...all].sort())
      expect([...(ReadModels.webhookDeliveries.types ?? [])].sort()).toEqual([...all].sort())
    })

    it.effect("a projection with applyBatch consumes the log a batch at a time, once per event", () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        const sql = yield* SqlClient.SqlClient
        const batches: Array<number> = []
        const name = `batch-probe-${randomUUID().slice(0, 8)}`
        yield* sql`CREATE TABLE IF NOT EXISTS batch_probe (name text, event_id uuid PRIMARY KEY)`.pipe(
          Effect.orDie
        )
        const probe = Projection.make({
          name,
          tables: [],
          setup: Effect.void,
          apply: () => Effect.dieMessage("applyBatch must be used"),
          applyBatch: (events) =>
            Effect.flatMap(SqlClient.SqlClient, (sql) => {
              batches.push(events.length)
              return sql`INSERT INTO batch_probe SELECT ${name}, unnest(${events.map((e) => e.eventId)}::uuid[])`
            }).pipe(Effect.asVoid)
        })
        const stream = `Probe-${randomUUID()}`
        for (let i = 0; i < 5; i++) {
          yield* store.append(
            stream,
            [{ eventId: randomUUID(), type: "Probed", schemaVersion: 1, data: { i }, metadata: {} }],
            i === 0 ? EventStore.ExpectedVersion.NoStream() : EventStore.ExpectedVersion.Exact({ version: i })
          )
        }
        yield* Projection.catchUp(probe)
        const total = batches.reduce((a, b) => a + b, 0)
        const rows = yield* sql<{
          count: string
        }>`SELECT count(*)::text AS count FROM batch_probe WHERE name = ${name}`
        expect(Number(rows[0]!.count)).toBe(total)
        expect(batches.every((size) => size > 0)).toBe(true)
        // Fewer calls than events: the whole log so far came in batches of up to 500.
        expect(batches.length).toBeLessThan(total)
        yield* Projection.catchUp(probe)
        expect(batches.reduce((a, b) => a + b, 0)).toBe(total)
      }).pipe(Effect.orDie)
    )
  })

suite("webhook read models in batches on PGlite", Databases.pglite, 25)
suite("webhook read models in batches on PostgreSQL", Databases.postgres, 40)
