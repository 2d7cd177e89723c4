/**
 * Progress of a walk over the log (`audit verify`, `audit rebuild`) on stderr: on a terminal a bar
 * redrawn in place (events done, events per second, time left); otherwise a plain line every few
 * seconds, so that logs and CI output stay readable.
 */
import * as Effect from "effect/Effect"
import { performance } from "node:perf_hooks"

/** A snapshot of the work. */
export interface Snapshot {
  readonly done: number
  /** The expected total (counted at the start; writers may add to it meanwhile). */
  readonly total: number
  readonly elapsedMillis: number
}

const number = (n: number) => Math.round(n).toLocaleString("en-US")

/** Events per second so far. */
export const rate = (s: Snapshot): number => (s.elapsedMillis <= 0 ? 0 : (s.done * 1000) / s.elapsedMillis)

/** Seconds left at the current rate; undefined before there is a rate. */
export const secondsLeft = (s: Snapshot): number | undefined => {
  const r = rate(s)
  return r <= 0 ? undefined : Math.max(0, s.total - s.done) / r
}

/** A duration for people: `42 s`, `3 min 05 s`, `1 h 02 min`. */
export const duration = (seconds: number): string => {
  const s = Math.round(seconds)
  if (s < 60) return `${s} s`
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s`
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")} min`
}

/** The bar drawn on a terminal, `width` characters for the bar itself. */
export const bar = (label: string, s: Snapshot, width = 30): string => {
  const fraction = s.total <= 0 ? 1 : Math.min(1, s.done / s.total)
  const filled = Math.round(fraction * width)
  const left = secondsLeft(s)
  return (
    `${label} [${"#".repeat(filled)}${"-".repeat(width - filled)}] ${String(Math.floor(fraction * 100)).padStart(3)}% ` +
    `${number(s.done)}/${number(s.total)} events  ${number(rate(s))} events/s  ` +
    (left === undefined ? "" : `${duration(left)} left`)
  )
}

/** The plain line printed when stderr is not a terminal. */
export const plainLine = (label: string, s: Snapshot): string => {
  const left = secondsLeft(s)
  const percent = s.total <= 0 ? 100 : Math.min(100, Math.floor((s.done / s.total) * 100))
  return (
    `${label}: ${s.done}/${s.total} events (${percent}%), ${Math.round(rate(s))} events/s` +
    (left === undefined ? "" : `, about ${duration(left)} left`)
  )
}

/** The last line: how much, how long, how fast. */
export const summary = (label: string, s: Snapshot): string =>
  `${label}: ${s.done} events in ${(s.elapsedMillis / 1000).toFixed(1)} s (${Math.round(rate(s))} events/s)`

/** A running progress display. */
export interface Progress {
  readonly update: (done: number) => Effect.Effect<void>
  readonly finish: Effect.Effect<void>
}

/** How often each display redraws. */
const barIntervalMillis = 100
const lineIntervalMillis = 2000

/** Starts a display for `total` events: a bar if stderr is a terminal, plain lines otherwise. */
export const start = (label: string, total: number): Effect.Effect<Progress> =>
  Effect.sync(() => {
    const tty = process.stderr.isTTY === true
    const started = performance.now()
    let last = started
    let done = 0
    const snapshot = (): Snapshot => ({
      done,
      total: Math.max(total, done),
      elapsedMillis: performance.now() - started
    })
    return {
      update: (n: number) =>
        Effect.sync(() => {
          done = n
          const now = performance.now()
          if (now - last < (tty ? barIntervalMillis : lineIntervalMillis)) return
          last = now
          if (tty) process.stderr.write(`\r\x1b[2K${bar(label, snapshot())}`)
          else process.stderr.write(`${plainLine(label, snapshot())}\n`)
        }),
      finish: Effect.sync(() => {
        if (tty) process.stderr.write("\r\x1b[2K")
        process.stderr.write(`${summary(label, snapshot())}\n`)
      })
    }
  })
