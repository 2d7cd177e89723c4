/**
 * The throttle of panel sign-ins: an address's failures in a sliding window of 15 minutes (per node),
 * the account count it keeps for every email in the counts the nodes share (so an unknown one answers
 * as a known one would, on whichever node), and the bound on the addresses it remembers.
 */
import { describe, expect, it } from "@effect/vitest"
import * as PanelUser from "@cobro/domain/PanelUser"
import * as SignInFailures from "@cobro/domain/SignInFailures"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import * as SignInThrottle from "../src/SignInThrottle.js"

const T0 = Date.UTC(2026, 10, 21, 15, 0, 0)
const at = (millis: number) => DateTime.unsafeMake(T0 + millis)
const MINUTE = 60_000

/** A node's throttle over its own counts of emails. */
const alone = Effect.provide(SignInThrottle.make, SignInFailures.layerMemory)

describe("SignInThrottle", () => {
  it.prop(
    "an address waits nothing before 10 failures in the window, then 1 s, doubling with each failure, never more than 15 minutes",
    [FastCheck.integer({ min: 0, max: 200 })],
    ([n]) => {
      const delay = SignInThrottle.addressDelayMillis(n)
      expect(delay).toBe(n < 10 ? 0 : Math.min(15 * MINUTE, 1000 * 2 ** (n - 10)))
      expect(SignInThrottle.addressDelayMillis(n + 1)).toBeGreaterThanOrEqual(delay)
    }
  )

  it.effect.prop(
    "an address's wait is its failures of the last 15 minutes' delay after the last of them; other addresses are not slowed",
    [
      FastCheck.array(FastCheck.integer({ min: 0, max: 40 * MINUTE }), { maxLength: 40 }),
      FastCheck.integer({ min: 0, max: 20 * MINUTE })
    ],
    ([gaps, later]) =>
      Effect.gen(function* () {
        const throttle = yield* alone
        const instants: Array<number> = []
        let now = 0
        for (const gap of gaps) {
          now += Math.floor(gap / 8)
          instants.push(now)
          // A new email each time: only the address counts.
          yield* throttle.failed("10.0.0.1", `guess${instants.length}@cafe.example`, at(now))
        }
        const asked = now + later
        const recent = instants.filter((t) => t > asked - 15 * MINUTE)
        const last = recent[recent.length - 1]
        const expected =
          last === undefined
            ? 0
            : Math.max(0, last + SignInThrottle.addressDelayMillis(recent.length) - asked)
        expect(yield* throttle.wait("10.0.0.1", "someone@cafe.example", at(asked))).toBe(expected)
        expect(yield* throttle.wait("10.0.0.2", "someone@cafe.example", at(asked))).toBe(0)
      })
  )

  it.effect("per email it counts as the account does (any address, any case), and a success forgives", () =>
    Effect.gen(function* () {
      const throttle = yield* alone
      for (let i = 0; i < 5; i++)
        yield* throttle.failed(`10.0.0.${i}`, i % 2 === 0 ? "Zoe@cafe.example" : "zoe@cafe.example", at(0))
      // The account's own throttle after five failures at 0: 1 s from then.
      const account = { failures: 5, lastFailureAt: Option.some(at(0)) }
      expect(yield* throttle.wait("10.9.9.9", " zoe@CAFE.example", at(400))).toBe(
        PanelUser.retryAfterMillis(account, at(400))
      )
      expect(yield* throttle.wait("10.9.9.9", "zoe@cafe.example", at(400))).toBe(600)
      expect(yield* throttle.wait("10.9.9.9", "ana@cafe.example", at(400))).toBe(0)
      yield* throttle.succeeded("ZOE@cafe.example")
      expect(yield* throttle.wait("10.9.9.9", "zoe@cafe.example", at(400))).toBe(0)
    })
  )

  it.effect(
    "it remembers a bounded number of addresses (MAX_ENTRIES): past that, the one touched longest ago is forgotten first",
    () =>
      Effect.gen(function* () {
        const throttle = yield* alone
        for (let i = 0; i < 10; i++) yield* throttle.failed("10.0.0.1", "a@cafe.example", at(0))
        expect(yield* throttle.wait("10.0.0.1", "b@cafe.example", at(0))).toBe(1000)
        for (let i = 0; i < SignInThrottle.MAX_ENTRIES; i++) {
          yield* throttle.failed(`172.16.${i >> 8}.${i & 255}`, "c@cafe.example", at(0))
        }
        expect(yield* throttle.wait("10.0.0.1", "b@cafe.example", at(0))).toBe(0)
      })
  )

  it.effect(
    "an unknown email's failures on one node make it wait on another exactly as a known email's do",
    () =>
      Effect.gen(function* () {
        // Two nodes: each its own throttle, the emails' counts shared (the store's table).
        const [first, second] = yield* Effect.all([SignInThrottle.make, SignInThrottle.make]).pipe(
          Effect.provide(SignInFailures.layerMemory)
        )
        for (let i = 0; i < 5; i++) {
          yield* first.failed("10.0.0.1", "nobody@cafe.example", at(0))
          // The log counts a known email's failures too; its count here is the same.
          yield* first.failed("10.0.0.1", "ana@cafe.example", at(0))
        }
        const account = { failures: 5, lastFailureAt: Option.some(at(0)) }
        const expected = PanelUser.retryAfterMillis(account, at(300))
        expect(expected).toBe(700)
        expect(yield* second.wait("10.0.0.2", "nobody@cafe.example", at(300))).toBe(expected)
        expect(yield* second.wait("10.0.0.2", "ana@cafe.example", at(300))).toBe(expected)
        yield* second.succeeded("ana@cafe.example")
        expect(yield* first.wait("10.0.0.3", "ana@cafe.example", at(300))).toBe(0)
        expect(yield* first.wait("10.0.0.3", "nobody@cafe.example", at(300))).toBe(expected)
      })
  )
})
