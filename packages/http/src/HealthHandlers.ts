/** Handlers of the health group: `/health` always, `/ready` from the server's `Readiness` check. */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Envelope from "@cobro/domain/Envelope"
import * as Effect from "effect/Effect"
import { CobroApi } from "./Api.js"
import * as Errors from "./Errors.js"
import { Readiness, TIMEOUT } from "./Readiness.js"

const ok = Envelope.success({ status: "ok" as const })

const notReady = new Errors.ServiceUnavailable({
  errors: [Errors.item("NotReady", "the event store does not answer")]
})

/** The health handlers. */
export const layer = HttpApiBuilder.group(CobroApi, "health", (handlers) =>
  handlers
    .handle("health", () => Effect.succeed(ok))
    .handle("ready", () =>
      Effect.flatMap(Readiness, ({ check }) =>
        check.pipe(
          Effect.timeoutFail({ duration: TIMEOUT, onTimeout: () => notReady }),
          Effect.mapError(() => notReady),
          Effect.as(ok)
        )
      )
    )
)
