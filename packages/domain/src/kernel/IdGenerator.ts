/**
 * The id port: handlers mint ids before they decide, so that `decide` stays pure and tests can
 * make ids deterministic.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"

/**
 * Mints the ids Cobro gives out.
 *
 * @category services
 */
export class IdGenerator extends Context.Tag("@cobro/domain/IdGenerator")<
  IdGenerator,
  {
    /** A new prefixed id, e.g. `LNK_…`; `prefix` includes the underscore. */
    readonly next: (prefix: string) => Effect.Effect<string>
    /** A new RFC 4122 UUID (event ids, notification ids). */
    readonly uuid: Effect.Effect<string>
  }
>() {}

/**
 * Deterministic ids for tests: `LNK_1`, `LNK_2`, … and UUIDs counting up from
 * `00000000-0000-4000-8000-000000000001`.
 *
 * @category layers
 */
export const layerSequential: Layer.Layer<IdGenerator> = Layer.effect(
  IdGenerator,
  Effect.gen(function* () {
    const counter = yield* Ref.make(0)
    const bump = Ref.updateAndGet(counter, (n) => n + 1)
    return {
      next: (prefix) => Effect.map(bump, (n) => `${prefix}${n}`),
      uuid: Effect.map(bump, (n) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`)
    }
  })
)

/**
 * A new prefixed id from the `IdGenerator` in context, e.g. `nextId("LNK_")`.
 *
 * @category accessors
 */
export const nextId = (prefix: string): Effect.Effect<string, never, IdGenerator> =>
  Effect.flatMap(IdGenerator, (ids) => ids.next(prefix))
