/**
 * The server's logs (issue 34, "Logs that join them"): readable for a person at a terminal by
 * default, or one JSON object per line on stdout (`COBRO_LOG_FORMAT=json`) with the request id, the
 * trace and span ids of the active span, level, message and cause; `COBRO_LOG_LEVEL` sets the level.
 */
import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FiberId from "effect/FiberId"
import * as FiberRef from "effect/FiberRef"
import * as FiberRefs from "effect/FiberRefs"
import * as HashSet from "effect/HashSet"
import * as Inspectable from "effect/Inspectable"
import * as Layer from "effect/Layer"
import * as List from "effect/List"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"

/** `COBRO_LOG_FORMAT`: `pretty` (Effect's readable logger, the default) or `json` (one object a line). */
export type Format = "pretty" | "json"

/** What the environment says about logging. */
export interface Settings {
  readonly format: Format
  readonly level: LogLevel.LogLevel
}

/** The values `COBRO_LOG_LEVEL` takes (any case), and the level each sets. */
export const levels: ReadonlyArray<readonly [string, LogLevel.LogLevel]> = [
  ["trace", LogLevel.Trace],
  ["debug", LogLevel.Debug],
  ["info", LogLevel.Info],
  ["warning", LogLevel.Warning],
  ["error", LogLevel.Error],
  ["fatal", LogLevel.Fatal],
  ["none", LogLevel.None]
]

const oneOf = (values: ReadonlyArray<string>) => `must be one of ${values.join(", ")} (any case)`

const choice = <A>(name: string, values: ReadonlyArray<readonly [string, A]>, fallback: A) =>
  Config.nonEmptyString(name).pipe(
    Config.mapOrFail((text) => {
      const found = values.find(([value]) => value === text.trim().toLowerCase())
      return found === undefined
        ? Either.left(ConfigError.InvalidData([], oneOf(values.map(([value]) => value))))
        : Either.right(found[1])
    }),
    Config.withDefault(fallback)
  )

/** `COBRO_LOG_FORMAT` and `COBRO_LOG_LEVEL`; an unknown value is a `ConfigError` naming the variable. */
export const config: Config.Config<Settings> = Config.all({
  format: choice<Format>(
    "COBRO_LOG_FORMAT",
    [
      ["pretty", "pretty"],
      ["json", "json"]
    ],
    "pretty"
  ),
  level: choice("COBRO_LOG_LEVEL", levels, LogLevel.Info)
})

/** One field of a log line: what `JSON.stringify` writes (redacted values stay redacted). */
const jsonValue = (u: unknown): unknown => {
  switch (typeof u) {
    case "bigint":
    case "function":
    case "symbol":
      return String(u)
    default:
      return Inspectable.toJSON(u)
  }
}

/** A message part as text: strings as they are, errors by name and message, anything else as JSON. */
const textOf = (u: unknown): string => {
  if (typeof u === "string") return u
  if (u instanceof Error) return `${u.name}: ${u.message}`
  const json = jsonValue(u)
  if (typeof json === "string") return json
  try {
    return Inspectable.stringifyCircular(json) ?? String(json)
  } catch {
    return String(u)
  }
}

/** The message of a log call as one string (`Effect.log("a", 1)` is "a 1"). */
export const messageText = (message: unknown): string =>
  Array.isArray(message) ? message.map(textOf).join(" ") : textOf(message)

/**
 * The span that is active in a log call's fiber, if any. A span made while tracing is off (a no-op
 * span, marked `DisablePropagation`) is skipped for its parent, as Effect's own tracer does.
 */
export const activeSpan = (context: FiberRefs.FiberRefs): Option.Option<Tracer.AnySpan> => {
  const services = FiberRefs.getOrDefault(context, FiberRef.currentContext)
  let span = Context.getOption(services, Tracer.ParentSpan)
  while (Option.isSome(span) && Context.get(span.value.context, Tracer.DisablePropagation)) {
    span = span.value._tag === "Span" ? span.value.parent : Option.none()
  }
  return span
}

/** The line's own fields: an annotation of one of these names goes under `annotations` instead. */
const RESERVED = new Set([
  "timestamp",
  "level",
  "message",
  "cause",
  "fiber",
  "annotations",
  "spans",
  "trace_id",
  "span_id"
])

/**
 * A log call as one line of JSON (no newline): `timestamp`, `level`, `message`, `cause` (when not
 * empty), `fiber`, the annotations as fields of their own (`request_id`, …; under `annotations` when
 * named as one of the line's own fields), `spans` (the log spans' durations in ms), and `trace_id`
 * and `span_id` when a tracing span is active.
 */
export const jsonLine = (options: Logger.Logger.Options<unknown>): string => {
  const line: Record<string, unknown> = {
    timestamp: options.date.toISOString(),
    level: options.logLevel.label,
    message: messageText(options.message)
  }
  if (!Cause.isEmpty(options.cause)) line["cause"] = Cause.pretty(options.cause, { renderErrorCause: true })
  line["fiber"] = FiberId.threadName(options.fiberId)
  let clashing: Record<string, unknown> | undefined
  for (const [key, value] of options.annotations) {
    if (!RESERVED.has(key)) line[key] = jsonValue(value)
    else (clashing ??= {})[key] = jsonValue(value)
  }
  if (clashing !== undefined) line["annotations"] = clashing
  if (List.isCons(options.spans)) {
    const now = options.date.getTime()
    const spans: Record<string, number> = {}
    for (const span of options.spans) spans[span.label] = now - span.startTime
    line["spans"] = spans
  }
  const span = activeSpan(options.context)
  if (Option.isSome(span)) {
    line["trace_id"] = span.value.traceId
    line["span_id"] = span.value.spanId
  }
  try {
    return Inspectable.stringifyCircular(line)
  } catch {
    // A BigInt deep inside an annotation: written as its digits, so the line still says what happened.
    return JSON.stringify(line, (_key, value: unknown) => (typeof value === "bigint" ? String(value) : value))
  }
}

/** Writes a line to stdout. */
const stdout = (line: string) => {
  process.stdout.write(`${line}\n`)
}

/** The JSON logger, writing each line with `write` (stdout unless a test gives its own). */
export const jsonLogger = (write: (line: string) => void = stdout): Logger.Logger<unknown, void> =>
  Logger.make((options) => write(jsonLine(options)))

/**
 * In JSON mode what the server prints with `Console.log`/`info` (the start-up banner, "Cobro
 * stopped.") is a JSON line at level INFO too, so that every line on stdout parses; `Console.error`
 * keeps writing plain text to stderr (the start-up failures people and tests read).
 */
const jsonConsole = (console: Console.Console, write: (line: string) => void): Console.Console => {
  const print = (...args: ReadonlyArray<unknown>) =>
    Effect.withFiberRuntime<void>((fiber) => {
      write(
        jsonLine({
          fiberId: fiber.id(),
          logLevel: LogLevel.Info,
          message: args,
          cause: Cause.empty,
          context: fiber.getFiberRefs(),
          spans: fiber.getFiberRef(FiberRef.currentLogSpan),
          annotations: fiber.getFiberRef(FiberRef.currentLogAnnotations),
          date: new Date()
        })
      )
      return Effect.void
    })
  return { ...console, log: print, info: print }
}

/** The loggers in place: every console logger (Effect's default, or the pretty one `runMain` installs) swapped for `logger`. */
const useLogger = (logger: Logger.Logger<unknown, unknown>) =>
  Layer.fiberRefLocallyScopedWith(FiberRef.currentLoggers, (loggers) =>
    loggers.pipe(
      HashSet.remove(Logger.defaultLogger),
      HashSet.remove(Logger.prettyLoggerDefault),
      HashSet.add(logger)
    )
  )

/** The logging of `settings`; `write` takes the JSON lines (stdout unless a test gives its own). */
export const layerFrom = (settings: Settings, write: (line: string) => void = stdout): Layer.Layer<never> =>
  Layer.mergeAll(
    Logger.minimumLogLevel(settings.level),
    settings.format === "json"
      ? Layer.merge(
          useLogger(jsonLogger(write)),
          Layer.unwrapEffect(
            Effect.map(Effect.console, (console) => Console.setConsole(jsonConsole(console, write)))
          )
        )
      : useLogger(Logger.prettyLoggerDefault)
  )

/** The logging the environment asks for (`COBRO_LOG_FORMAT`, `COBRO_LOG_LEVEL`); fails on an unknown value. */
export const layer: Layer.Layer<never, ConfigError.ConfigError> = Layer.unwrapEffect(
  Effect.map(config, layerFrom)
)
