/**
 * A terminal push made again carries the id of what caused it (issue 34): the claim written with the
 * checkout keeps the traceparent of the request's span (`ReadModels.duePushClaims`), and the pusher's
 * span of the push again (`TerminalPusher.push`) links to it. On PGlite, with a tracer that records
 * its spans; the terminal is unplugged (the push fails and is left for the next round: the span is
 * what is checked).
 */
import * as IdGenerator from "@cobro/domain/IdGenerator"
import { IntegrationId } from "@cobro/domain/Ids"
import * as TerminalCheckout from "@cobro/domain/TerminalCheckout"
import { TerminalGateway } from "@cobro/domain/TerminalGateway"
import { expect, layer } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Databases from "../../store-pg/test/support/Databases.js"
import * as Fixtures from "../../store-pg/test/support/Fixtures.js"
import * as RecordingTracer from "../../webhooks/test/support/RecordingTracer.js"
import * as TerminalPusher from "../src/TerminalPusher.js"

const T0 = Date.UTC(2026, 10, 21, 15, 0, 0)
const at = DateTime.unsafeMake(T0)

const Unplugged = Layer.succeed(TerminalGateway, { push: () => Effect.dieMessage("unplugged") })

/** A checkout and its first push's claim, written in one append at T0 (long lapsed), as A3 does. */
const claimed = (integrationId: IntegrationId) =>
  Fixtures.recordEvents(
    `TerminalCheckout-${integrationId}`,
    [
      Fixtures.checkoutCreated({ integrationId, merchantId: "MER_PUSH", sandbox: false, createdAt: at }),
      new TerminalCheckout.PushAttempted({ attempt: 1, at })
    ].map(Fixtures.checkoutEvent)
  )

layer(Layer.mergeAll(Unplugged, IdGenerator.layerSequential).pipe(Layer.provideMerge(Databases.pglite)), {
  excludeTestServices: true,
  timeout: 60_000
})("the terminal pusher's spans", (it) => {
  it.effect("a push made again links to the request that claimed the push first", () =>
    Effect.gen(function* () {
      const { spans, tracer } = RecordingTracer.make()
      const traced = RecordingTracer.withTracer(tracer)
      const linked = IntegrationId.make("INT_traced")
      const unlinked = IntegrationId.make("INT_untraced")
      yield* claimed(linked).pipe(Effect.withSpan("request"), traced)
      yield* claimed(unlinked).pipe(Effect.withSpan("request"), Effect.withTracerEnabled(false))
      const request = spans.find((s) => s.name === "request")!

      // The unplugged terminal's failures are logged as warnings: not this test's subject.
      const round = yield* TerminalPusher.pushOnce().pipe(traced, Logger.withMinimumLogLevel(LogLevel.Error))
      expect(round.due).toBe(2)
      const pushOf = (id: IntegrationId) =>
        spans.filter(
          (s) => s.name === "TerminalPusher.push" && s.attributes.get("cobro.integration_id") === id
        )
      const [push, ...others] = pushOf(linked)
      expect(others).toEqual([])
      expect(push!.links.map((link) => RecordingTracer.traceparentOf(link.span))).toEqual([
        RecordingTracer.traceparentOf(request)
      ])
      expect(push!.ended).toBe(true)
      // Its own trace (the pusher's round), linked to the request's rather than inside it.
      expect(push!.traceId).not.toBe(request.traceId)
      expect(pushOf(unlinked).map((s) => s.links)).toEqual([[]])
      // Both still wait for their terminal: the gauge counts them.
      expect(yield* TerminalPusher.pendingPushes).toBe(2)
    })
  )
})
