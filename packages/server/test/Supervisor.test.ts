/**
 * The background workers' supervisor (issue 17): a worker that fails is logged with its cause and
 * restarted with exponential backoff, and `/ready`'s check names it while it is down beyond the bound.
 */
import * as InMemoryEventStore from "@cobro/domain/InMemoryEventStore"
import * as Readiness from "@cobro/http/Readiness"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import * as Server from "../src/Server.js"
import * as Supervisor from "../src/Supervisor.js"

/** The `/ready` check the server composes, over an in-memory store and this supervisor. */
const readinessOf = (supervisor: Supervisor.Supervisor["Type"]) =>
  Effect.flatMap(Readiness.Readiness, ({ check }) => Effect.either(check)).pipe(
    Effect.provide(
      Server.layerReadiness.pipe(
        Layer.provide(InMemoryEventStore.layer),
        Layer.provide(Layer.succeed(Supervisor.Supervisor, supervisor))
      )
    )
  )

describe("Supervisor", () => {
  it.scoped(
    "a failing worker is logged with its cause and restarted with backoff; /ready names it while it is down beyond the bound, and is ready as soon as it runs again",
    Effect.fnUntraced(function* () {
      const logs: Array<{ level: string; message: string; cause: string }> = []
      const logger = Logger.replace(
        Logger.defaultLogger,
        Logger.make(({ cause, logLevel, message }) =>
          logs.push({ level: logLevel.label, message: String(message), cause: String(cause) })
        )
      )
      const supervisor = yield* Supervisor.make({
        minBackoff: "1 second",
        maxBackoff: "8 seconds",
        stableAfter: "10 seconds",
        downBound: "5 seconds",
        clock: yield* Effect.clock
      })
      let starts = 0
      // Fails on its first four starts, then runs as a worker does: for ever.
      const worker = Effect.suspend(() => {
        starts++
        return starts <= 4 ? Effect.dieMessage(`the database went away (start ${starts})`) : Effect.never
      })
      yield* supervisor.supervise("Flaky sweeper", worker).pipe(Effect.provide(logger))
      const steps: Array<[string, number]> = []
      const at = (label: string) => Effect.sync(() => steps.push([label, starts]))
      yield* TestClock.adjust(0)
      yield* at("0 s")
      yield* TestClock.adjust("999 millis")
      yield* at("0.999 s")
      yield* TestClock.adjust("1 millis")
      yield* at("1 s")
      yield* TestClock.adjust("2 seconds")
      yield* at("3 s")
      expect(Option.isSome((yield* supervisor.health)[0]!.downSince)).toBe(true)
      // Down since 0 s, within the 5 s bound: still ready.
      expect((yield* readinessOf(supervisor))._tag).toBe("Right")
      yield* TestClock.adjust("4 seconds")
      yield* at("7 s")
      // 1 s, 2 s, 4 s between restarts: exponential.
      expect(steps).toEqual([
        ["0 s", 1],
        ["0.999 s", 1],
        ["1 s", 2],
        ["3 s", 3],
        ["7 s", 4]
      ])
      const down = yield* readinessOf(supervisor)
      expect(down._tag).toBe("Left")
      if (down._tag === "Left") {
        expect(down.left).toBeInstanceOf(Readiness.NotReady)
        const { reasons } = down.left as Readiness.NotReady
        expect(reasons).toHaveLength(1)
        expect(reasons[0]).toMatch(/^background worker "Flaky sweeper" has been down for 7 s/)
      }
      // The fifth start runs: ready at once; its health counts it down until it has run `stableAfter`.
      yield* TestClock.adjust("8 seconds")
      expect(starts).toBe(5)
      expect((yield* readinessOf(supervisor))._tag).toBe("Right")
      expect(Option.isSome((yield* supervisor.health)[0]!.downSince)).toBe(true)
      yield* TestClock.adjust("10 seconds")
      expect((yield* readinessOf(supervisor))._tag).toBe("Right")
      expect(yield* supervisor.health).toEqual([
        { name: "Flaky sweeper", downSince: Option.none(), failures: 0 }
      ])
      const failures = logs.filter((log) => log.message.includes('worker "Flaky sweeper" failed'))
      expect(failures.map((log) => log.level)).toEqual(["ERROR", "ERROR", "ERROR", "ERROR"])
      expect(failures[0]!.message).toContain("the database went away (start 1)")
      expect(failures[3]!.cause).toContain("the database went away (start 4)")
    })
  )

  it.scoped(
    "a worker that ends is logged and started again: a worker is meant to run for ever",
    Effect.fnUntraced(function* () {
      const logs: Array<string> = []
      const logger = Logger.replace(
        Logger.defaultLogger,
        Logger.make(({ logLevel, message }) => logs.push(`${logLevel.label} ${String(message)}`))
      )
      const supervisor = yield* Supervisor.make({ minBackoff: "1 second", clock: yield* Effect.clock })
      let starts = 0
      yield* supervisor
        .supervise(
          "Quitter",
          Effect.sync(() => starts++)
        )
        .pipe(Effect.provide(logger))
      yield* TestClock.adjust("1 second")
      expect(starts).toBe(2)
      expect(logs[0]).toMatch(/^WARN worker "Quitter" ended/)
    })
  )
})
