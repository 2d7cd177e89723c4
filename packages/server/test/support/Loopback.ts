/**
 * A server of the test's own (a fake of what the code under test calls) on a free port of
 * 127.0.0.1, for the test's scope.
 */
import * as Effect from "effect/Effect"
import type * as Http from "node:http"
import type * as Net from "node:net"

/**
 * Serves `server` on a free port of 127.0.0.1 until the scope closes: its URL. Its open connections
 * are cut at the close (a stream or a keep-alive connection left open would hold it).
 */
export const serve = (server: Http.Server) =>
  Effect.acquireRelease(
    Effect.async<string>((resume) => {
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed(`http://127.0.0.1:${(server.address() as Net.AddressInfo).port}`))
      )
    }),
    () =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )
