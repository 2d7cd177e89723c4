/**
 * The server's logs (issue 34, "Logs that join them"; spec-decisions SV-37): with
 * `COBRO_LOG_FORMAT=json` one JSON object per log call, with level, message, cause, annotations and
 * the active span's ids; `COBRO_LOG_LEVEL` sets the level; an unknown value of either is refused.
 */
import { describe, expect, it } from "@effect/vitest"
import * as ConfigError from "effect/ConfigError"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FastCheck from "effect/FastCheck"
import * as FiberRef from "effect/FiberRef"
import * as HashSet from "effect/HashSet"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Redacted from "effect/Redacted"
import * as Tracer from "effect/Tracer"
import * as Logging from "../src/Logging.js"

/** Runs `effect` with the logging of `env` (as environment variables), the JSON lines kept. */
const logged = <A, E>(effect: Effect.Effect<A, E>, env: Record<string, string> = {}) => {
  const lines: Array<string> = []
  return Effect.flatMap(Logging.config, (settings) =>
    Effect.provide(
      effect,
      Logging.layerFrom(settings, (line) => lines.push(line))
    )
  ).pipe(
    Effect.withConfigProvider(
      ConfigProvider.fromMap(new Map(Object.entries({ COBRO_LOG_FORMAT: "json", ...env })))
    ),
    Effect.map(() => lines)
  )
}

/** The lines of `effect` (each must be one JSON object), parsed. */
const parsed = (lines: ReadonlyArray<string>) =>
  lines.map((line) => {
    expect(line).not.toContain("\n")
    const value = JSON.parse(line)
    expect(typeof value).toBe("object")
    return value as Record<string, unknown>
  })

/** The settings `env` gives, or the failure. */
const settingsOf = (env: Record<string, string>) =>
  Effect.exit(Effect.withConfigProvider(Logging.config, ConfigProvider.fromMap(new Map(Object.entries(env)))))

describe("COBRO_LOG_FORMAT=json", () => {
  it.effect("one parseable line per log call, with timestamp, level, message and fiber", () =>
    Effect.gen(function* () {
      const lines = yield* logged(
        Effect.zipRight(Effect.logInfo("first"), Effect.logWarning("second", "part", 3))
      )
      expect(lines).toHaveLength(2)
      const [first, second] = parsed(lines)
      expect(first).toMatchObject({ level: "INFO", message: "first" })
      expect(new Date(first!["timestamp"] as string).toISOString()).toBe(first!["timestamp"])
      expect(first!["fiber"]).toMatch(/^#\d+$/)
      expect(first).not.toHaveProperty("cause")
      expect(second).toMatchObject({ level: "WARN", message: "second part 3" })
    })
  )

  it.effect("annotations are fields of the line (request_id), log spans are under spans", () =>
    Effect.gen(function* () {
      const [line] = parsed(
        yield* logged(
          Effect.logInfo("annotated").pipe(
            Effect.annotateLogs({ request_id: "req_1", merchant_id: "MER_1" }),
            Effect.withLogSpan("sweep")
          )
        )
      )
      expect(line).toMatchObject({ message: "annotated", request_id: "req_1", merchant_id: "MER_1" })
      expect(typeof (line!["spans"] as Record<string, unknown>)["sweep"]).toBe("number")
    })
  )

  it.effect("an annotation named as a line's own field is kept under annotations, not in its place", () =>
    Effect.gen(function* () {
      const [line] = parsed(
        yield* logged(Effect.logInfo("mine").pipe(Effect.annotateLogs({ message: "theirs", level: "FATAL" })))
      )
      expect(line).toMatchObject({
        message: "mine",
        level: "INFO",
        annotations: { message: "theirs", level: "FATAL" }
      })
    })
  )

  it.effect("a redacted value is written as <redacted>", () =>
    Effect.gen(function* () {
      const lines = yield* logged(
        Effect.logInfo("key", Redacted.make("s3cr3t")).pipe(
          Effect.annotateLogs("token", Redacted.make("s3cr3t"))
        )
      )
      expect(lines.join("\n")).not.toContain("s3cr3t")
      expect(parsed(lines)[0]).toMatchObject({ message: "key <redacted>", token: "<redacted>" })
    })
  )

  it.effect("the cause is in the line, rendered, when the call has one", () =>
    Effect.gen(function* () {
      const [line] = parsed(
        yield* logged(
          Effect.fail(new Error("database gone")).pipe(
            Effect.tapErrorCause((cause) => Effect.logError("the store failed", cause)),
            Effect.ignore
          )
        )
      )
      expect(line).toMatchObject({ level: "ERROR", message: "the store failed" })
      expect(line!["cause"]).toContain("Error: database gone")
      // An error among the message's parts is written by name and message.
      const [part] = parsed(yield* logged(Effect.logError("a worker failed", new Error("refused"))))
      expect(part).toMatchObject({ message: "a worker failed Error: refused" })
    })
  )

  it.effect("inside a span (tracer on) the line has trace_id and span_id, the span's own", () =>
    Effect.gen(function* () {
      let span: Tracer.Span | undefined
      const lines = yield* logged(
        Effect.currentSpan.pipe(
          Effect.tap((current) => {
            span = current
          }),
          Effect.zipRight(Effect.logInfo("in a span")),
          Effect.withSpan("Test.span"),
          Effect.zipRight(Effect.logInfo("outside")),
          Effect.withTracerEnabled(true)
        )
      )
      const [inside, outside] = parsed(lines)
      expect(span).toBeDefined()
      expect(inside).toMatchObject({ trace_id: span!.traceId, span_id: span!.spanId })
      expect(outside).not.toHaveProperty("trace_id")
      expect(outside).not.toHaveProperty("span_id")
    })
  )

  it.effect("an external parent span's ids (a traceparent) are the line's", () =>
    Effect.gen(function* () {
      const parent = Tracer.externalSpan({
        traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
        spanId: "00f067aa0ba902b7"
      })
      const [line] = parsed(yield* logged(Effect.withParentSpan(Effect.logInfo("joined"), parent)))
      expect(line).toMatchObject({ trace_id: parent.traceId, span_id: parent.spanId })
    })
  )

  it.effect("with tracing off (the server's default), a span gives no ids: no span is active", () =>
    Effect.gen(function* () {
      const [line] = parsed(
        yield* logged(
          Effect.logInfo("untraced").pipe(Effect.withSpan("Test.off"), Effect.withTracerEnabled(false))
        )
      )
      expect(line).not.toHaveProperty("trace_id")
      expect(line).not.toHaveProperty("span_id")
    })
  )

  it.effect(
    "Console.log (the banner, 'Cobro stopped.') is a JSON line too; Console.error is not captured",
    () =>
      Effect.gen(function* () {
        const lines = yield* logged(Console.log("Cobro is listening on http://127.0.0.1:8080\n  docs …"))
        expect(parsed(lines)).toMatchObject([
          { level: "INFO", message: "Cobro is listening on http://127.0.0.1:8080\n  docs …" }
        ])
      })
  )

  it.prop(
    "any message string round-trips through its JSON line",
    [FastCheck.string({ unit: "binary", maxLength: 200 })],
    ([message]) => {
      const lines = Effect.runSync(logged(Effect.logInfo(message)))
      expect(lines).toHaveLength(1)
      expect(lines[0]).not.toMatch(/[\n\r]/)
      expect(JSON.parse(lines[0]!).message).toBe(message)
    }
  )
})

describe("COBRO_LOG_LEVEL", () => {
  it.effect("warning drops info and debug, keeps warnings and errors", () =>
    Effect.gen(function* () {
      const lines = yield* logged(
        Effect.all([Effect.logDebug("d"), Effect.logInfo("i"), Effect.logWarning("w"), Effect.logError("e")]),
        { COBRO_LOG_LEVEL: "warning" }
      )
      expect(parsed(lines).map((line) => line["message"])).toStrictEqual(["w", "e"])
    })
  )

  it.effect("the default is info; debug shows debug; none shows nothing; any case is read", () =>
    Effect.gen(function* () {
      const calls = Effect.all([Effect.logDebug("d"), Effect.logInfo("i")])
      expect(parsed(yield* logged(calls)).map((l) => l["message"])).toStrictEqual(["i"])
      expect(
        parsed(yield* logged(calls, { COBRO_LOG_LEVEL: "DEBUG" })).map((l) => l["message"])
      ).toStrictEqual(["d", "i"])
      expect(yield* logged(Effect.logFatal("f"), { COBRO_LOG_LEVEL: "none" })).toStrictEqual([])
      const settings = yield* Effect.withConfigProvider(
        Logging.config,
        ConfigProvider.fromMap(new Map([["COBRO_LOG_LEVEL", "Trace"]]))
      )
      expect(settings).toStrictEqual({ format: "pretty", level: LogLevel.Trace })
    })
  )

  it.effect("unset (or empty) values are the defaults: pretty, info", () =>
    Effect.gen(function* () {
      for (const env of [{}, { COBRO_LOG_FORMAT: "", COBRO_LOG_LEVEL: "" }]) {
        const exit = yield* settingsOf(env)
        expect(exit).toStrictEqual(Exit.succeed({ format: "pretty", level: LogLevel.Info }))
      }
    })
  )

  it.effect("an unknown level or format is a ConfigError naming the variable and its values", () =>
    Effect.gen(function* () {
      for (const [env, name] of [
        [{ COBRO_LOG_LEVEL: "verbose" }, "COBRO_LOG_LEVEL"],
        [{ COBRO_LOG_LEVEL: "warn" }, "COBRO_LOG_LEVEL"],
        [{ COBRO_LOG_FORMAT: "xml" }, "COBRO_LOG_FORMAT"]
      ] as const) {
        const exit = yield* settingsOf(env)
        expect(Exit.isFailure(exit)).toBe(true)
        if (Exit.isFailure(exit)) {
          const error = exit.cause._tag === "Fail" ? exit.cause.error : undefined
          expect(ConfigError.isConfigError(error)).toBe(true)
          expect(String(error)).toContain(name)
          expect(String(error)).toContain(
            name === "COBRO_LOG_LEVEL" ? "trace, debug, info, warning" : "pretty, json"
          )
        }
      }
      // The layer fails the same way: the server reports it as an invalid configuration.
      const built = yield* Effect.exit(
        Effect.provide(Effect.void, Logging.layer).pipe(
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["COBRO_LOG_LEVEL", "loud"]])))
        )
      )
      expect(Exit.isFailure(built)).toBe(true)
    })
  )
})

describe("the loggers in place", () => {
  /** The loggers `effect` sees when runMain's pretty logger was installed before the layer. */
  const loggersUnder = (settings: Logging.Settings) =>
    FiberRef.get(FiberRef.currentLoggers).pipe(
      Effect.provide(Logging.layerFrom(settings, () => {})),
      Effect.locallyWith(FiberRef.currentLoggers, HashSet.add(Logger.prettyLoggerDefault))
    )

  it.effect("pretty: Effect's readable logger, once, in place of the default one", () =>
    Effect.gen(function* () {
      const loggers = yield* loggersUnder({ format: "pretty", level: LogLevel.Info })
      expect(HashSet.has(loggers, Logger.prettyLoggerDefault)).toBe(true)
      expect(HashSet.has(loggers, Logger.defaultLogger)).toBe(false)
    })
  )

  it.effect("json: neither the default nor the pretty logger prints a line of its own", () =>
    Effect.gen(function* () {
      const loggers = yield* loggersUnder({ format: "json", level: LogLevel.Info })
      expect(HashSet.has(loggers, Logger.prettyLoggerDefault)).toBe(false)
      expect(HashSet.has(loggers, Logger.defaultLogger)).toBe(false)
    })
  )
})
