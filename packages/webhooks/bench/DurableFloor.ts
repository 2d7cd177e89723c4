/**
 * The durable floor of `npm run bench -- webhooks`: the floor's loop (sign and POST with `undici`)
 * plus the least PostgreSQL work that keeps the promises, "none may be lost" and "every
 * attempt is recorded": each notification written before it is sent, each attempt written once it
 * is answered, with plain `pg`. No event log, hash chain, read models, leases or Effect: what any
 * design that keeps those promises pays on this machine, whatever its code. Cobro's rate is
 * reported against it too, so that the share of the gap that is Cobro's own work shows apart from
 * the share that durability costs.
 */
import { createHmac, randomUUID } from "node:crypto"
import { performance } from "node:perf_hooks"
import type * as Pg from "pg"
import { Pool } from "undici"

/** The two tables: notifications (the outbox) and their attempts, each with its primary key. */
export const schema = `
  CREATE TABLE floor_notifications (
    id uuid PRIMARY KEY,
    body text NOT NULL,
    scheduled_at timestamptz NOT NULL DEFAULT now()
  );
  CREATE TABLE floor_attempts (
    notification_id uuid NOT NULL,
    attempt integer NOT NULL,
    status integer NOT NULL,
    latency_ms double precision NOT NULL,
    attempted_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (notification_id, attempt)
  )`

export interface RoundOptions {
  /** A pool on a database holding {@link schema}. */
  readonly pg: Pg.Pool
  readonly url: string
  readonly ca: string
  readonly bodies: ReadonlyArray<string>
  readonly secret: string
  /** POSTs in flight (the dispatcher's 32). */
  readonly concurrency: number
  /** Notifications written per statement (the dispatcher's batch of 100). */
  readonly batch: number
}

interface Attempt {
  readonly id: string
  readonly status: number
  readonly latencyMs: number
}

/**
 * Attempts recorded as Cobro's dispatcher records them: whatever is waiting, in one statement, as
 * soon as the previous one is done; a sender waits for its attempt's record.
 */
const makeRecorder = (pg: Pg.Pool) => {
  let waiting: Array<{ attempt: Attempt; done: () => void; failed: (e: unknown) => void }> = []
  let flushing = false
  const flush = async () => {
    flushing = true
    while (waiting.length > 0) {
      const batch = waiting
      waiting = []
      try {
        await pg.query(
          `INSERT INTO floor_attempts (notification_id, attempt, status, latency_ms)
           SELECT id, 1, status, latency FROM unnest($1::uuid[], $2::integer[], $3::float8[]) AS a(id, status, latency)`,
          [
            batch.map((b) => b.attempt.id),
            batch.map((b) => b.attempt.status),
            batch.map((b) => b.attempt.latencyMs)
          ]
        )
        for (const b of batch) b.done()
      } catch (error) {
        for (const b of batch) b.failed(error)
      }
    }
    flushing = false
  }
  return (attempt: Attempt) =>
    new Promise<void>((done, failed) => {
      waiting.push({ attempt, done, failed })
      if (!flushing) void flush()
    })
}

/** One round over `bodies`; returns its seconds. */
export const round = async (options: RoundOptions): Promise<number> => {
  const { pg, bodies, batch } = options
  const target = new URL(options.url)
  const http = new Pool(target.origin, { connections: 64, pipelining: 1, connect: { ca: options.ca } })
  const ids = bodies.map(() => randomUUID())
  const encoded = bodies.map((b) => Buffer.from(b, "utf8"))
  const record = makeRecorder(pg)
  const start = performance.now()
  // The outbox, written ahead of the senders in chunks (as a notifier writes a page's deliveries);
  // a notification is sent only once its chunk is written.
  const scheduled: Array<Promise<unknown>> = []
  for (let from = 0; from < bodies.length; from += batch) {
    const to = Math.min(from + batch, bodies.length)
    scheduled.push(
      pg.query(`INSERT INTO floor_notifications (id, body) SELECT * FROM unnest($1::uuid[], $2::text[])`, [
        ids.slice(from, to),
        bodies.slice(from, to)
      ])
    )
  }
  let next = 0
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      while (next < encoded.length) {
        const i = next++
        await scheduled[Math.floor(i / batch)]
        const body = encoded[i]!
        const signature = createHmac("sha256", options.secret)
          .update(body.toString("base64"), "utf8")
          .digest("hex")
        const sent = performance.now()
        const response = await http.request({
          path: target.pathname,
          method: "POST",
          body,
          headers: {
            "content-type": "application/json",
            "user-agent": "durable-floor",
            "x-service-signature": signature
          }
        })
        await response.body.text()
        if (response.statusCode !== 200) throw new Error(`durable floor: status ${response.statusCode}`)
        await record({ id: ids[i]!, status: response.statusCode, latencyMs: performance.now() - sent })
      }
    })
  )
  const seconds = (performance.now() - start) / 1000
  await http.close()
  const { rows } = await pg.query<{ n: string }>(
    `SELECT count(*)::text AS n FROM floor_attempts WHERE notification_id = ANY($1::uuid[])`,
    [ids]
  )
  if (Number(rows[0]!.n) !== bodies.length)
    throw new Error(`durable floor: ${rows[0]!.n} attempts recorded of ${bodies.length}`)
  return seconds
}
