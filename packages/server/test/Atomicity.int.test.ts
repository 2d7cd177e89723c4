/**
 * Each use case's decision commits all or nothing, on real PostgreSQL, when the connection dies in
 * the middle of its commit: a test trigger terminates the backend while it inserts one event of the
 * commit (after the commit's other streams have been written in the same statement, where they used
 * to be appends of their own). A multi-stream commit that fails is tried once more, whole, on another
 * connection (`PgEventStore.appendBatch`'s reference path); when that dies too, nothing of the commit
 * stays, the request answers with an error in the envelope, and sent again it succeeds with each
 * event stored once.
 */
import * as TerminalCheckout from "@cobro/domain/TerminalCheckout"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Pg from "pg"
import * as ServerProcess from "./support/ServerProcess.js"

const admin = ServerProcess.asAdmin
const withKey = ServerProcess.withKey

/**
 * A `BEFORE INSERT` trigger on the log that, once armed for an event type, terminates the backend
 * inserting such an event, for the first `times` of them (a sequence counts the firings: it is not
 * rolled back with the transaction it kills).
 */
const installKiller = (db: Pg.Client) =>
  Effect.promise(() =>
    db.query(`
      CREATE TABLE test_kill_target (type text NOT NULL, times integer NOT NULL);
      CREATE SEQUENCE test_kill_fired;
      CREATE FUNCTION test_kill_backend() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        -- Nested: SQL's AND does not promise to evaluate left to right.
        IF NEW.type = (SELECT type FROM test_kill_target LIMIT 1) THEN
          IF nextval('test_kill_fired') <= (SELECT times FROM test_kill_target LIMIT 1) THEN
            PERFORM pg_terminate_backend(pg_backend_pid());
            PERFORM pg_sleep(10);
          END IF;
        END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER test_kill BEFORE INSERT ON cobro_events FOR EACH ROW EXECUTE FUNCTION test_kill_backend();`)
  )

const arm = (db: Pg.Client, type: string, times: number) =>
  Effect.promise(() =>
    db.query(
      `BEGIN; DELETE FROM test_kill_target; INSERT INTO test_kill_target VALUES ('${type}', ${times});
       ALTER SEQUENCE test_kill_fired RESTART; COMMIT;`
    )
  )

/** How many events of the armed type were inserted (killed or not) since it was armed. */
const fired = (db: Pg.Client) =>
  Effect.promise(() =>
    db.query(`SELECT CASE WHEN is_called THEN last_value ELSE 0 END AS n FROM test_kill_fired`)
  ).pipe(Effect.map((result) => Number(result.rows[0].n)))

const disarm = (db: Pg.Client) => Effect.promise(() => db.query(`DELETE FROM test_kill_target`))

/** The log's last position. */
const head = (db: Pg.Client) =>
  Effect.promise(() =>
    db.query(`SELECT coalesce(max(global_position), 0)::text AS head FROM cobro_events`)
  ).pipe(Effect.map((result) => result.rows[0].head as string))

/** How many events of each type were appended after `mark`. */
const appendedSince = (db: Pg.Client, mark: string, types: ReadonlyArray<string>) =>
  Effect.promise(() =>
    db.query(
      `SELECT type, count(*)::int AS n FROM cobro_events WHERE global_position > $1::bigint AND type = ANY($2::text[])
       GROUP BY type`,
      [mark, types]
    )
  ).pipe(
    Effect.map((result) =>
      Object.fromEntries(types.map((type) => [type, result.rows.find((row) => row.type === type)?.n ?? 0]))
    )
  )

/**
 * Sends `request` with the trigger armed at `type` for `times` inserts, then disarms it: the answer,
 * the log's head before it, and how many inserts of the type the trigger saw.
 */
const armed = <A>(db: Pg.Client, type: string, times: number, request: Effect.Effect<A>) =>
  Effect.gen(function* () {
    const mark = yield* head(db)
    yield* arm(db, type, times)
    const reply = yield* request
    const firings = yield* fired(db)
    yield* disarm(db)
    return { reply, mark, firings }
  })

const none = (types: ReadonlyArray<string>) => Object.fromEntries(types.map((type) => [type, 0]))
const once = (types: ReadonlyArray<string>) => Object.fromEntries(types.map((type) => [type, 1]))

describe("a use case's commit when its connection dies mid-commit", () => {
  it.scopedLive(
    "A3's checkout and claim, A3's terminal answer with its notification, C4's intent and payment, C8's void with its notification, C9's refund on the payment and the Refund: all or nothing",
    Effect.fnUntraced(function* () {
      const { hook, server, database } = yield* ServerProcess.startOnPostgresWithReceiver({
        COBRO_CLOCK: "virtual"
      })
      // 10:00 in Bogotá (15:00 UTC) next, whatever the hour the test runs at: C8 voids only before 21:00.
      const now = Date.parse(
        (yield* admin(server, "POST", "/admin/v1/clock/advance", { seconds: 0 })).json.now
      )
      const morning = new Date(now)
      morning.setUTCHours(15, 0, 0, 0)
      if (morning.getTime() <= now) morning.setUTCDate(morning.getUTCDate() + 1)
      const advanced = yield* admin(server, "POST", "/admin/v1/clock/advance", {
        seconds: Math.ceil((morning.getTime() - now) / 1000)
      })
      expect(advanced.status, advanced.text).toBe(200)
      const { keys } = yield* ServerProcess.merchantWithTerminal(server, {
        name: "Tienda Atómica",
        serial: "SN-ATOM",
        webhook: { url: hook.url, mode: "test" }
      })
      const terminalKey: string = keys.terminal_api.test.identity_key
      const buttonKey: string = keys.payment_button.test.identity_key
      const db = yield* ServerProcess.databaseClient(database.DATABASE_URL)
      yield* installKiller(db)

      /**
       * Sends `request` with every try of its commit armed to die at `killAt` (the first, the
       * whole-batch retry of a multi-stream one, and both again on a fresh connection, SV-34):
       * nothing of `commit` may be stored, and the answer is the envelope of a database that cannot
       * take the request (AP001 with `Retry-After` on the terminal API, else 503). Then sends it
       * again: it succeeds with `ok`, and each of `commit` is stored once.
       */
      const case_ = (
        name: string,
        killAt: string,
        commit: ReadonlyArray<string>,
        request: Effect.Effect<{ status: number; text: string; json: any; headers: Record<string, string> }>,
        ok: number
      ) =>
        Effect.gen(function* () {
          const { firings, mark, reply: cut } = yield* armed(db, killAt, 4, request)
          expect(firings, `${name}: the trigger fired`).toBeGreaterThan(0)
          expect(yield* appendedSince(db, mark, commit), `${name}: nothing of the commit stays`).toEqual(
            none(commit)
          )
          const terminal = name.startsWith("A3")
          expect(cut.status, `${name}: ${cut.text}`).toBe(terminal ? 500 : 503)
          expect(cut.json?.errors?.[0]?.code, `${name}: ${cut.text}`).toBe(terminal ? "AP001" : "Unavailable")
          expect(cut.headers["retry-after"], `${name}: Retry-After`).toBe("1")
          const again = yield* request
          expect(again.status, `${name}: ${again.text}`).toBe(ok)
          expect(yield* appendedSince(db, mark, commit), `${name}: each once`).toEqual(once(commit))
          return again
        })

      /** Creates the intent `reference` (C1) with the button key. */
      const openIntent = (reference: string) =>
        Effect.flatMap(
          withKey(
            server,
            buttonKey,
            "POST",
            "/v1/payment-intent",
            ServerProcess.onlineIntent(reference, 50000)
          ),
          (created) => Effect.sync(() => expect(created.status, created.text).toBe(201))
        )

      // A3: the checkout and its push claim (one stream, two events).
      yield* case_(
        "A3 checkout",
        "PushAttempted",
        ["CheckoutCreated", "PushAttempted"],
        withKey(
          server,
          terminalKey,
          "POST",
          "/payments/app-checkout",
          ServerProcess.terminalSale("SN-ATOM", "atom-1")
        ),
        201
      )

      // A3: the terminal's answer (the simulated terminal's request and outcome, the checkout's
      // delivery and approval, the notification) is one commit after the checkout's.
      const answer = [
        "RequestReceived",
        "OutcomeRecorded",
        "CheckoutSent",
        "SaleApproved",
        "DeliveryScheduled"
      ]
      const answered = yield* armed(
        db,
        "DeliveryScheduled",
        4,
        withKey(
          server,
          terminalKey,
          "POST",
          "/payments/app-checkout",
          ServerProcess.terminalSale("SN-ATOM", "atom-2")
        )
      )
      expect(answered.firings).toBeGreaterThan(0)
      const [sale, beforeSale] = [answered.reply, answered.mark]
      // The checkout and its claim committed before the answer failed: A3 answers 201, since the
      // pusher pushes it again once its claim lapses (spec-decisions A-23); an error would have the
      // merchant send the sale again, and both would be charged.
      expect(sale.status, sale.text).toBe(201)
      expect(yield* appendedSince(db, beforeSale, answer), "A3 answer: nothing of it stays").toEqual(
        none(answer)
      )
      expect(yield* appendedSince(db, beforeSale, ["CheckoutCreated"])).toEqual(once(["CheckoutCreated"]))
      // Past the claim's timeout, the pusher records the whole answer, once.
      const pushed = yield* admin(server, "POST", "/admin/v1/clock/advance", {
        seconds: TerminalCheckout.PUSH_TIMEOUT_MS / 1000 + 1
      })
      expect(pushed.status, pushed.text).toBe(200)
      for (let i = 0; i < 300; i++) {
        if ((yield* appendedSince(db, beforeSale, ["DeliveryScheduled"])).DeliveryScheduled > 0) break
        yield* Effect.sleep("200 millis")
      }
      expect(yield* appendedSince(db, beforeSale, answer), "A3 answer: the pusher's, once").toEqual(
        once(answer)
      )

      // C4: the intent and its payment.
      yield* openIntent("atom-c4")
      yield* case_(
        "C4 attempt",
        "IntentPaymentStarted",
        ["PaymentStarted", "IntentPaymentStarted"],
        withKey(server, buttonKey, "POST", "/v1/payment", ServerProcess.cardAttempt("atom-c4")),
        201
      )

      // A multi-stream commit whose first try dies is tried once more, whole, on another connection;
      // when both tries on its connection die, once more on a fresh connection (SV-34).
      for (const [reference, kills] of [
        ["atom-once", 1],
        ["atom-fresh", 2]
      ] as const) {
        yield* openIntent(reference)
        const retried = yield* armed(
          db,
          "IntentPaymentStarted",
          kills,
          withKey(server, buttonKey, "POST", "/v1/payment", ServerProcess.cardAttempt(reference))
        )
        // One insert of the event per try killed, and the one that commits.
        expect(retried.firings, reference).toBe(kills + 1)
        expect(retried.reply.status, retried.reply.text).toBe(201)
        expect(yield* appendedSince(db, retried.mark, ["PaymentStarted", "IntentPaymentStarted"])).toEqual(
          once(["PaymentStarted", "IntentPaymentStarted"])
        )
      }

      /** An intent `reference` paid by card (C1, C4); its payment's transaction id. */
      const paidIntent = (reference: string) =>
        Effect.gen(function* () {
          yield* openIntent(reference)
          const paid = yield* withKey(
            server,
            buttonKey,
            "POST",
            "/v1/payment",
            ServerProcess.cardAttempt(reference)
          )
          expect(paid.status, paid.text).toBe(201)
          return (paid.json.transaction_id ?? paid.json.payload.transaction_id) as string
        })

      // C9: the refund requested on the payment and the Refund stream.
      const refunded = yield* paidIntent("atom-c9")
      yield* case_(
        "C9 refund",
        "RefundRequested",
        ["PaymentRefundRequested", "RefundRequested"],
        withKey(server, buttonKey, "POST", "/v1/payment/refund", {
          reference_id: "atom-c9",
          transaction_id: refunded,
          reason: "customer"
        }),
        204
      )

      // C8: the void and its notification.
      const voided = yield* paidIntent("atom-c8")
      yield* case_(
        "C8 void",
        "DeliveryScheduled",
        ["PaymentVoided", "DeliveryScheduled"],
        withKey(server, buttonKey, "POST", "/v1/payment/void", { transaction_id: voided }),
        204
      )
    }),
    120_000
  )
})
