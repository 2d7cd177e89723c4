/** Handlers of the health group: `/health` always, `/ready` from the server's `Readiness` check. */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Envelope from "@cobro/domain/Envelope"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { CobroApi } from "@cobro/api/Api"
import * as Errors from "@cobro/api/Errors"
import { NotReady, Readiness, STORE_DOWN, TIMEOUT } from "./Readiness.js"

const ok = Envelope.success({ status: "ok" as const })

/** A 503 with one `NotReady` item per reason; a failure that gives none is the event store's. */
const notReady = (error: unknown) => {
  const reasons = error instanceof NotReady && error.reasons.length > 0 ? error.reasons : [STORE_DOWN]
  const [first, ...rest] = reasons.map((reason) => Errors.item("NotReady", reason))
  return new Errors.ServiceUnavailable({ errors: [first!, ...rest] })
}

// A safety net past the checks' own bound (`TIMEOUT`), so that a slow store still lets the other
// reasons through.
const HANDLER_TIMEOUT = Duration.sum(TIMEOUT, Duration.seconds(1))

/** The health handlers. */
export const layer = HttpApiBuilder.group(CobroApi, "health", (handlers) =>
  handlers
    .handle("health", () => Effect.succeed(ok))
    .handle("ready", () =>
      Effect.flatMap(Readiness, ({ check }) =>
        check.pipe(
          Effect.timeoutFail({ duration: HANDLER_TIMEOUT, onTimeout: () => undefined }),
          Effect.mapError(notReady),
          Effect.as(ok)
        )
      )
    )
)
