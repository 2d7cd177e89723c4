/**
 * The floors of `npm run bench -- webhooks`: a raw loop that signs each body with the spec's recipe
 * (hex HMAC-SHA256 over the Base64 of the raw bytes) and POSTs it with `undici`, so many in flight.
 *
 * With `durable`, the same loop also does the least PostgreSQL work that keeps the promises,
 * "none may be lost" and "every attempt is recorded": each notification written before it is sent,
 * each attempt written once it is answered, with plain `pg`. No event log, hash chain, read models,
 * leases or Effect: what any design that keeps those promises pays on this machine, whatever its
 * code, so that the share of Cobro's gap that is its own work shows apart from what durability costs.
 */
import { createHmac, randomUUID } from "node:crypto"
import { performance } from "node:perf_hooks"
import type * as Pg from "pg"
import { Pool } from "undici"

/** The durable floor's two tables: notifications (the outbox) and their attempts, each with its primary key. */
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
  readonly url: string
  readonly ca: string
  readonly bodies: ReadonlyArray<string>
  readonly secret: string
  /** POSTs in flight (the dispatcher's 32). */
  readonly concurrency: number
  /** The durable floor: a pool on a database holding {@link schema}, and notifications written per statement. */
  readonly durable?: { readonly pg: Pg.Pool; readonly batch: number }
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

/**
 * The durable part of a round: the outbox written ahead of the senders in chunks (as a notifier
 * writes a page's deliveries), `ready(i)` resolving once body `i`'s chunk is written, and `record`.
 */
const makeOutbox = (pg: Pg.Pool, bodies: ReadonlyArray<string>, batch: number) => {
  const ids = bodies.map(() => randomUUID())
  const chunks: Array<Promise<unknown>> = []
  for (let from = 0; from < bodies.length; from += batch) {
    const to = Math.min(from + batch, bodies.length)
    chunks.push(
      pg.query(`INSERT INTO floor_notifications (id, body) SELECT * FROM unnest($1::uuid[], $2::text[])`, [
        ids.slice(from, to),
        bodies.slice(from, to)
      ])
    )
  }
  const record = makeRecorder(pg)
  return {
    ready: (i: number) => chunks[Math.floor(i / batch)],
    record: (i: number, status: number, latencyMs: number) => record({ id: ids[i]!, status, latencyMs }),
    /** Checks that every attempt of the round was recorded. */
    check: async () => {
      const { rows } = await pg.query<{ n: string }>(
        `SELECT count(*)::text AS n FROM floor_attempts WHERE notification_id = ANY($1::uuid[])`,
        [ids]
      )
      if (Number(rows[0]!.n) !== bodies.length)
        throw new Error(`durable floor: ${rows[0]!.n} attempts recorded of ${bodies.length}`)
    }
  }
}

/**
 * POSTs one body signed with the spec's recipe (hex HMAC-SHA256 over the Base64 of the raw bytes),
 * reads the answer; returns its status. The loop of the floors and of graphile-worker's task.
 */
export const signAndPost = async (
  http: Pool,
  path: string,
  body: Buffer,
  secret: string,
  userAgent: string
): Promise<number> => {
  const signature = createHmac("sha256", secret).update(body.toString("base64"), "utf8").digest("hex")
  const response = await http.request({
    path,
    method: "POST",
    body,
    headers: { "content-type": "application/json", "user-agent": userAgent, "x-service-signature": signature }
  })
  await response.body.text()
  return response.statusCode
}

/** One round over `bodies`; returns its seconds. Every answer must be 200. */
export const round = async (options: RoundOptions): Promise<number> => {
  const { bodies, durable } = options
  const target = new URL(options.url)
  const http = new Pool(target.origin, { connections: 64, pipelining: 1, connect: { ca: options.ca } })
  const encoded = bodies.map((b) => Buffer.from(b, "utf8"))
  const start = performance.now()
  const outbox = durable === undefined ? undefined : makeOutbox(durable.pg, bodies, durable.batch)
  let next = 0
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      while (next < encoded.length) {
        const i = next++
        await outbox?.ready(i)
        const sent = performance.now()
        const status = await signAndPost(http, target.pathname, encoded[i]!, options.secret, "floor")
        if (status !== 200) throw new Error(`floor: status ${status}`)
        await outbox?.record(i, status, performance.now() - sent)
      }
    })
  )
  const seconds = (performance.now() - start) / 1000
  await http.close()
  await outbox?.check()
  return seconds
}
