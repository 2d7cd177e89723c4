import * as SandboxClock from "@cobro/domain/SandboxClock"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { describe, expect, it } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import * as VirtualClock from "../src/VirtualClock.js"

/**
 * Runs `f` on the virtual clock (`COBRO_CLOCK=virtual`) with its sandbox clock and the test's
 * TestClock in hand: inside the virtual clock, `TestClock.adjust` would find the virtual one.
 */
const onVirtualClock = <A, E>(
  f: (sandbox: SandboxClock.SandboxClock["Type"], testClock: TestClock.TestClock) => Effect.Effect<A, E>
) =>
  TestClock.testClockWith((testClock) =>
    Effect.flatMap(SandboxClock.SandboxClock, (sandbox) => f(sandbox, testClock)).pipe(
      Effect.provide(VirtualClock.layerVirtual)
    )
  )

const millis = Effect.map(DateTime.now, DateTime.toEpochMillis)

describe("VirtualClock", () => {
  it.effect(
    "COBRO_CLOCK=virtual: advancing moves DateTime.now and Clock forward by exactly that many seconds",
    () =>
      onVirtualClock((sandbox, testClock) =>
        Effect.gen(function* () {
          expect(yield* millis).toBe(0)
          const now = yield* sandbox.advance(90)
          expect(DateTime.toEpochMillis(now)).toBe(90_000)
          expect(yield* millis).toBe(90_000)
          expect(yield* Clock.currentTimeMillis).toBe(90_000)
          expect(yield* Clock.currentTimeNanos).toBe(90_000_000_000n)
          // The underlying clock keeps running under the offset.
          yield* testClock.adjust("5 seconds")
          expect(yield* millis).toBe(95_000)
        })
      )
  )

  it.effect("advancing never moves the clock back: a negative amount changes nothing", () =>
    onVirtualClock((sandbox) =>
      Effect.gen(function* () {
        yield* sandbox.advance(10)
        const after = yield* sandbox.advance(-5)
        expect(DateTime.toEpochMillis(after)).toBe(10_000)
      })
    )
  )

  it.effect("sleeps keep real durations: advancing does not wake a sleeper early", () =>
    onVirtualClock((sandbox, testClock) =>
      Effect.gen(function* () {
        const sleeper = yield* Effect.fork(Effect.sleep("10 seconds"))
        yield* sandbox.advance(3600)
        yield* testClock.adjust("9 seconds")
        expect(Option.isNone(yield* Fiber.poll(sleeper))).toBe(true)
        yield* testClock.adjust("1 second")
        expect(Exit.isSuccess(yield* Fiber.await(sleeper))).toBe(true)
      })
    )
  )

  it.effect("the virtual clock is the clock of the layers built on it and of the fibers they fork", () =>
    Effect.gen(function* () {
      const sandbox = yield* SandboxClock.SandboxClock
      yield* sandbox.advance(86_400)
      const response = yield* HttpClient.get("/now")
      expect(Number(yield* response.text)).toBe(86_400_000)
    }).pipe(
      Effect.provide(
        HttpServer.serve(
          HttpRouter.empty.pipe(
            HttpRouter.get(
              "/now",
              Effect.map(millis, (now) => HttpServerResponse.text(String(now)))
            )
          )
        ).pipe(Layer.provideMerge(NodeHttpServer.layerTest), Layer.provideMerge(VirtualClock.layerVirtual))
      )
    )
  )

  it.live("on the real clock, the virtual clock reads the real time plus the offset", () =>
    Effect.gen(function* () {
      const sandbox = yield* SandboxClock.SandboxClock
      yield* sandbox.advance(3600)
      const real = yield* Effect.withClock(Effect.map(Clock.currentTimeMillis, Number), Clock.make())
      const virtual = yield* Clock.currentTimeMillis
      expect(virtual - real).toBeGreaterThanOrEqual(3_600_000)
      expect(virtual - real).toBeLessThan(3_600_000 + 1000)
    }).pipe(Effect.provide(VirtualClock.layerVirtual))
  )

  it.effect("on the real clock (COBRO_CLOCK unset), advancing is refused with ClockNotVirtual", () =>
    Effect.gen(function* () {
      const sandbox = yield* SandboxClock.SandboxClock
      const error = yield* Effect.flip(sandbox.advance(60))
      expect(error._tag).toBe("ClockNotVirtual")
      expect(yield* millis).toBe(0)
    }).pipe(Effect.provide(VirtualClock.layerReal))
  )
})
