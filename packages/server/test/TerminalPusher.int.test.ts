/**
 * Every terminal push is durable until the terminal answers (issue 31, item 3; spec-decisions A-23),
 * on real server processes on PostgreSQL with the virtual clock: A3 claims the push in the commit
 * that creates the checkout, and the server's pusher pushes again a claim whose request was cut (the
 * client went away, the process was killed) once it has lapsed; concurrent sales on one terminal
 * contend on its stream and are retried, never read as unreachable. Each sale ends decided, with its
 * webhook delivered.
 */
import * as TerminalCheckout from "@cobro/domain/TerminalCheckout"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Pg from "pg"
import * as ServerProcess from "./support/ServerProcess.js"

const { asAdmin } = ServerProcess

/** The advisory lock the test holds to stop every push at the terminal's first write. */
const PUSH_GATE = 3131

/**
 * A trigger that makes the terminal's first write of a push (`RequestReceived`) wait for the
 * advisory lock {@link PUSH_GATE}, which the test's own connection holds: the checkout and its claim
 * are committed, the push is stopped before anything of the terminal's answer is.
 */
const closeGate = (db: Pg.Client) =>
  Effect.promise(() =>
    db.query(`
      SELECT pg_advisory_lock(${PUSH_GATE});
      CREATE FUNCTION test_push_gate() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_advisory_xact_lock(${PUSH_GATE});
        RETURN NEW;
      END $$;
      CREATE TRIGGER test_push_gate BEFORE INSERT ON cobro_events FOR EACH ROW
        WHEN (NEW.type = 'RequestReceived') EXECUTE FUNCTION test_push_gate();`)
  )

/** The sessions waiting at the gate. */
const waitingAtGate = (db: Pg.Client) =>
  Effect.promise(() =>
    db.query(`SELECT pid FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'
        AND pid <> pg_backend_pid()`)
  ).pipe(Effect.map((result) => result.rows.map((row) => row.pid as number)))

/**
 * Ends the pushes stopped at the gate without letting them write (their sessions are terminated: the
 * request that ran them is gone), then opens the gate for the pushes to come.
 */
const openGateDroppingWaiters = (db: Pg.Client) =>
  Effect.gen(function* () {
    yield* Effect.promise(() =>
      db.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event = 'advisory' AND pid <> pg_backend_pid()`)
    )
    yield* eventually("the stopped pushes' sessions end", () =>
      Effect.map(waitingAtGate(db), (pids) => pids.length === 0)
    )
    yield* Effect.promise(() =>
      db.query(`DROP TRIGGER test_push_gate ON cobro_events; SELECT pg_advisory_unlock(${PUSH_GATE})`)
    )
  })

/** Checks `done` every 200 ms for at most 60 s; dies naming `what` if it never holds. */
const eventually = (what: string, done: () => Effect.Effect<boolean>) =>
  Effect.gen(function* () {
    for (let i = 0; i < 300; i++) {
      if (yield* done()) return
      yield* Effect.sleep("200 millis")
    }
    return yield* Effect.dieMessage(`never: ${what}`)
  })

/** The event types of the checkout whose reference is `reference` (none before it is committed). */
const checkoutEvents = (db: Pg.Client, reference: string) =>
  Effect.promise(() =>
    db.query(
      `SELECT e.type FROM cobro_events e
       JOIN cobro_events c ON c.stream_id = e.stream_id AND c.type = 'CheckoutCreated'
       WHERE starts_with(e.stream_id, 'TerminalCheckout-') AND c.data->>'reference' = $1
       ORDER BY e.stream_version`,
      [reference]
    )
  ).pipe(Effect.map((result) => result.rows.map((row) => row.type as string)))

/** The webhook types the receiver got for the sale `reference`. */
const webhooksOf = (hook: { readonly received: ReadonlyArray<ServerProcess.Received> }, reference: string) =>
  hook.received
    .map((r) => JSON.parse(r.body))
    .filter((body) => body.data?.metadata?.reference === reference)
    .map((body) => body.type as string)

/** Waits until the sale `reference` is APPROVED and its SALE_APPROVED webhook delivered, once. */
const approvedAndNotified = (
  db: Pg.Client,
  hook: { readonly received: ReadonlyArray<ServerProcess.Received> },
  reference: string
) =>
  Effect.gen(function* () {
    yield* eventually(`${reference} approved and notified`, () =>
      Effect.map(
        checkoutEvents(db, reference),
        (types) => types.includes("SaleApproved") && webhooksOf(hook, reference).length > 0
      )
    )
    const types = yield* checkoutEvents(db, reference)
    expect(types.filter((t) => t === "SaleApproved")).toHaveLength(1)
    expect(types).not.toContain("DeliveryFailed")
    expect(webhooksOf(hook, reference)).toEqual(["SALE_APPROVED"])
    return types
  })

/** A checkout's events when its first push's claim lapsed and a pusher pushed it again. */
const PUSHED_AGAIN = ["CheckoutCreated", "PushAttempted", "PushAttempted", "CheckoutSent", "SaleApproved"]

/** Moves the server's virtual clock past the push timeout: every claim made before has lapsed. */
const pastThePushTimeout = (server: ServerProcess.RunningServer) =>
  Effect.flatMap(
    asAdmin(server, "POST", "/admin/v1/clock/advance", {
      seconds: TerminalCheckout.PUSH_TIMEOUT_MS / 1000 + 1
    }),
    (reply) => Effect.sync(() => expect(reply.status, reply.text).toBe(200))
  )

/** A server on a fresh PostgreSQL database with the virtual clock, a merchant with the terminal `serial`. */
const givenSale = (serial: string) =>
  Effect.gen(function* () {
    const { database, hook, server } = yield* ServerProcess.startOnPostgresWithReceiver({
      COBRO_CLOCK: "virtual"
    })
    const { keys } = yield* ServerProcess.merchantWithTerminal(server, {
      name: "Tienda Empuje",
      serial,
      webhook: { url: hook.url, mode: "test" }
    })
    const key: string = keys.terminal_api.test.identity_key
    const db = yield* ServerProcess.databaseClient(database.DATABASE_URL)
    const sell = (on: ServerProcess.RunningServer, reference: string, signal?: AbortSignal) =>
      Effect.promise(() =>
        fetch(`${on.url}/payments/app-checkout`, {
          method: "POST",
          headers: { authorization: `x-api-key ${key}`, "content-type": "application/json" },
          body: JSON.stringify(ServerProcess.terminalSale(serial, reference)),
          ...(signal === undefined ? {} : { signal })
        }).then(
          async (response) => ({ status: response.status, text: await response.text() }),
          (error) => ({ status: 0, text: String(error) })
        )
      )
    return { database, hook, server, key, db, sell }
  })

/**
 * Sends the sale `reference` with the push stopped at the gate, and waits until the checkout and
 * its claim are committed and the push waits: the request is then cut by `cut`.
 */
const stoppedAfterCommit = (
  db: Pg.Client,
  reference: string,
  send: Effect.Effect<{ status: number; text: string }>
) =>
  Effect.gen(function* () {
    yield* closeGate(db)
    const request = yield* Effect.fork(send)
    yield* eventually(`${reference} committed, its push waiting`, () =>
      Effect.zipWith(
        checkoutEvents(db, reference),
        waitingAtGate(db),
        (types, waiting) => types.length === 2 && waiting.length === 1
      )
    )
    expect(yield* checkoutEvents(db, reference)).toEqual(["CheckoutCreated", "PushAttempted"])
    return request
  })

describe("terminal pushes are durable until the terminal answers", { timeout: 360_000 }, () => {
  it.scopedLive(
    "a client that disconnects after the checkout's commit, while its push is under way: the pusher pushes it once its claim lapses, and it ends APPROVED with its webhook",
    Effect.fnUntraced(function* () {
      const { db, hook, sell, server } = yield* givenSale("SN-CUT")
      const abort = new AbortController()
      const request = yield* stoppedAfterCommit(db, "cut-1", sell(server, "cut-1", abort.signal))
      abort.abort()
      expect((yield* request.await)._tag).toBe("Success")
      yield* openGateDroppingWaiters(db)
      expect(yield* checkoutEvents(db, "cut-1")).toEqual(["CheckoutCreated", "PushAttempted"])
      yield* pastThePushTimeout(server)
      expect(yield* approvedAndNotified(db, hook, "cut-1")).toEqual(PUSHED_AGAIN)
      yield* ServerProcess.stopsCleanly(server)
    })
  )

  it.scopedLive(
    "a server killed (kill -9) between the checkout's commit and its push: after a restart of two nodes one pusher pushes it, and it ends APPROVED with its webhook, once",
    Effect.fnUntraced(function* () {
      const { database, db, hook, sell, server } = yield* givenSale("SN-KILL")
      yield* stoppedAfterCommit(db, "kill-1", sell(server, "kill-1"))
      const killed = yield* Effect.promise(() => server.stop("SIGKILL"))
      expect(killed.signal).toBe("SIGKILL")
      yield* openGateDroppingWaiters(db)
      expect(yield* checkoutEvents(db, "kill-1")).toEqual(["CheckoutCreated", "PushAttempted"])
      // Two nodes come back, each with its pusher: one of them claims the lapsed push and pushes it.
      const env = { ...database, COBRO_DEV_WEBHOOKS: "1", COBRO_CLOCK: "virtual" }
      const [restarted, other] = yield* Effect.all([ServerProcess.start(env), ServerProcess.start(env)], {
        concurrency: 2
      })
      yield* pastThePushTimeout(restarted)
      expect(yield* approvedAndNotified(db, hook, "kill-1")).toEqual(PUSHED_AGAIN)
      yield* ServerProcess.stopsCleanly(other)
      yield* ServerProcess.stopsCleanly(restarted)
    })
  )

  it.scopedLive(
    "32 concurrent sales on one reachable terminal, through two server processes: each ends APPROVED with its webhook, none UNREACHABLE",
    Effect.fnUntraced(function* () {
      const { database, db, hook, sell, server } = yield* givenSale("SN-BUSY")
      const second = yield* ServerProcess.start({
        ...database,
        COBRO_DEV_WEBHOOKS: "1",
        COBRO_CLOCK: "virtual"
      })
      const references = Array.from({ length: 32 }, (_, i) => `busy-${i}`)
      const answers = yield* Effect.forEach(
        references,
        (reference, i) => sell(i % 2 === 0 ? server : second, reference),
        { concurrency: "unbounded" }
      )
      for (const answer of answers) expect(answer.status, answer.text).toBe(201)
      // A push the terminal was too busy to answer in time waits for the pusher, past its claim.
      yield* pastThePushTimeout(server)
      for (const reference of references) yield* approvedAndNotified(db, hook, reference)
      const failed = yield* Effect.promise(() =>
        db.query(`SELECT count(*)::int AS n FROM cobro_events WHERE type = 'DeliveryFailed'`)
      )
      expect(failed.rows[0].n).toBe(0)
      yield* ServerProcess.stopsCleanly(second)
      yield* ServerProcess.stopsCleanly(server)
    })
  )
})
