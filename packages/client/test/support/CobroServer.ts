/**
 * A Cobro server in the test's process on a real socket: the server's own composition
 * (`Server.layerStore`, `layerPorts`, `layerBackground` with the webhook dispatcher, the log's
 * checkpoints, the HTTP app) on PGlite in a temp folder, the real clock (or the sandbox's virtual
 * one, `COBRO_CLOCK=virtual`, with `layerWith({ clock: "virtual" })`), http webhooks to 127.0.0.1
 * allowed (`COBRO_DEV_WEBHOOKS=1`), a checkpoint signed every second.
 */
import * as Checkpoint from "@cobro/store-pg/Checkpoint"
import * as Server from "@cobro/server/Server"
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { createHash, randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as NodeHttp from "node:http"
import * as Os from "node:os"
import * as Path from "node:path"

/** The running server: its URL and admin token. */
export class CobroServer extends Context.Tag("test/CobroServer")<
  CobroServer,
  { readonly url: string; readonly adminToken: string }
>() {}

/** How the server runs: its clock (`COBRO_CLOCK`), real unless told. */
export interface Options {
  readonly clock?: "real" | "virtual"
}

const settingsFor = (dataDir: string, adminToken: string, options: Options): Server.Settings => {
  const sealingKey = randomBytes(32)
  return {
    config: {
      port: 0,
      host: "127.0.0.1",
      database: { _tag: "Pglite", dataDir },
      adminToken: Option.some(Redacted.make(adminToken)),
      clock: options.clock ?? "real",
      devWebhooks: true,
      sealingKey: Option.none(),
      publicUrl: Option.none(),
      checkoutUrl: Option.none(),
      checkpointKey: Option.none(),
      logOrigin: Option.none(),
      checkpointEveryEvents: 1,
      checkpointEverySeconds: 1
    },
    adminToken: Redacted.make(adminToken),
    adminTokenGenerated: false,
    sealingKey: { key: Redacted.make(sealingKey), source: "COBRO_SEALING_KEY" },
    checkpointKey: {
      signer: Checkpoint.signer(new Uint8Array(createHash("sha256").update(sealingKey).digest())),
      source: "COBRO_CHECKPOINT_KEY"
    }
  }
}

const tempDir = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "cobro-client-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)

/** The server for the scope of the layer (one per test file), run with `options`. */
export const layerWith = (options: Options = {}): Layer.Layer<CobroServer> =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      const dir = yield* tempDir
      const adminToken = randomBytes(18).toString("base64url")
      const settings = settingsFor(Path.join(dir, "data"), adminToken, options)
      const ports = Server.layerPorts(settings).pipe(Layer.provideMerge(Server.layerStore(settings)))
      const served = Server.layerApp.pipe(
        Layer.provideMerge(NodeHttpServer.layer(NodeHttp.createServer, { port: 0, host: "127.0.0.1" })),
        Layer.provide(Layer.merge(Server.layerBackground, Server.layerTransparencyLog(settings))),
        Layer.provide(ports)
      )
      return Layer.effect(
        CobroServer,
        Effect.map(HttpServer.HttpServer, (server) => {
          const address = server.address
          if (address._tag !== "TcpAddress") throw new Error("the server is not on TCP")
          return { url: `http://127.0.0.1:${address.port}`, adminToken }
        })
      ).pipe(Layer.provide(served))
    })
  ).pipe(Layer.orDie)

/** The server for the scope of the layer (one per test file), on the real clock. */
export const layer: Layer.Layer<CobroServer> = layerWith()
