/**
 * A setup file for workers that keep their modules from one test file to the next (`isolate: false`).
 * `@effect/vitest`'s `layer` assigns its suite's methods (`effect`, `scoped`, `prop`, `flakyTest`,
 * `layer`) onto the `it` every file imports, which is vitest's own: the next file's `it.effect` would
 * run in the previous file's layer, without `TestClock` (`testClock.setTime is not a function`).
 * Before each file, `it` gets back the methods it had when the worker first loaded it.
 */
import { it } from "@effect/vitest"

const key = Symbol.for("cobro/test/effectVitestIt")

const own = ((globalThis as Record<symbol, unknown>)[key] ??= {
  effect: it.effect,
  scoped: it.scoped,
  prop: it.prop,
  flakyTest: it.flakyTest,
  layer: it.layer
}) as Partial<typeof it>

Object.assign(it, own)
