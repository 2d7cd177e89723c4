/**
 * `cobro listen` run in the test's scope (`Listen.listen`), its lines captured instead of printed and
 * its Ctrl-C a `Deferred` the test completes.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Listen from "../../src/cli/Listen.js"

/** Forks the listener with `options` for the scope: its standard output and error lines, and `stopped`, which stops it and gives its end. */
export const fork = (options: Listen.ListenOptions) =>
  Effect.gen(function* () {
    const out: Array<string> = []
    const err: Array<string> = []
    const stop = yield* Deferred.make<void>()
    const fiber = yield* Listen.listen(options).pipe(
      Effect.provideService(Listen.ListenIo, {
        out: (line) => Effect.sync(() => void out.push(line)),
        err: (line) => Effect.sync(() => void err.push(line)),
        stop: Deferred.await(stop)
      }),
      Effect.forkScoped
    )
    const stopped = Effect.zipRight(Deferred.succeed(stop, undefined), Fiber.await(fiber))
    return { out, err, stopped }
  })
