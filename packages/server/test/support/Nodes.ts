/**
 * Server nodes built in the test's process from the server's own layers (`Server.layerStore`,
 * `layerPorts`, `layerBackground`, the HTTP app), on the virtual clock, with one more worker of the
 * test's (a sweeper polling faster than the server's own).
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as Config from "../../src/Config.js"
import * as Server from "../../src/Server.js"

/** The settings of a node on `database` with the virtual clock (`COBRO_CLOCK=virtual`). */
export const settingsFor = (
  database: Config.Database,
  sealingKey: Buffer,
  adminToken: string
): Server.Settings => ({
  config: {
    port: 0,
    host: "127.0.0.1",
    database,
    adminToken: Option.some(Redacted.make(adminToken)),
    clock: "virtual",
    devWebhooks: true,
    sealingKey: Option.none(),
    publicUrl: Option.none(),
    checkoutUrl: Option.none()
  },
  adminToken: Redacted.make(adminToken),
  adminTokenGenerated: false,
  sealingKey: { key: Redacted.make(sealingKey), source: "COBRO_SEALING_KEY" }
})

/** The worker of the test, forked for the layer's lifetime as the server forks its own. */
type Worker = Effect.Effect<unknown, unknown, Layer.Layer.Success<ReturnType<typeof ports>>>

const ports = (settings: Server.Settings, poolSize?: number) =>
  Server.layerPorts(settings).pipe(
    Layer.provideMerge(Server.layerStore(settings, poolSize === undefined ? {} : { poolSize }))
  )

/** A node without HTTP (a second node beside the one the test talks to): its own pool, clock and workers. */
export const node = (settings: Server.Settings, worker: Worker) =>
  Layer.mergeAll(Server.layerBackground, Layer.scopedDiscard(Effect.forkScoped(worker))).pipe(
    Layer.provideMerge(ports(settings, 8))
  )

/** A node whose app is served on a test socket, whose `HttpClient` the test uses. */
export const nodeWithHttp = (settings: Server.Settings, worker: Worker) =>
  Server.layerApp.pipe(
    Layer.provideMerge(NodeHttpServer.layerTest),
    Layer.provide(Layer.scopedDiscard(Effect.forkScoped(worker))),
    Layer.provide(Server.layerBackground),
    Layer.provideMerge(ports(settings))
  )
