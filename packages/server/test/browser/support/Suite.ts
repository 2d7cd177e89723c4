/**
 * What a browser suite runs against, started once for its file: a real server process (`npm start`'s
 * script) on PGlite in a copy of the run's set-up folder, a local webhook receiver and Chromium; and the suite's calls to
 * the server from outside the browser.
 */
import { afterAll, beforeAll, expect } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import type { Browser } from "playwright-core"
import * as PgliteTemplate from "../../support/PgliteTemplate.js"
import * as ServerProcess from "../../support/ServerProcess.js"
import * as Chromium from "./Browser.js"
import * as WebhookReceiver from "./WebhookReceiver.js"

/** An answer of the server: its status, its body, and the body as JSON when it is JSON. */
export interface Reply {
  readonly status: number
  readonly text: string
  readonly json: any
}

/** The suite's server, receiver and browser, once `beforeAll` has started them. */
export interface Suite {
  readonly server: ServerProcess.RunningServer
  readonly browser: Browser
  readonly hooks: WebhookReceiver.Receiver
  /** A call to the server with `authorization` (`auth`) and a JSON body (a bigint written exactly). */
  readonly call: (
    method: string,
    path: string,
    options?: { readonly body?: unknown; readonly auth?: string }
  ) => Promise<Reply>
}

/**
 * Starts the suite before the file's tests (the server with `env` and development webhooks, its
 * data in a folder named from `prefix`) and stops it after them, checking that the server exited
 * with status 0.
 */
export const make = (prefix: string, env: Record<string, string>): Suite => {
  let dataDir: string | undefined
  let server: ServerProcess.RunningServer | undefined
  let browser: Browser | undefined
  let hooks: WebhookReceiver.Receiver | undefined

  beforeAll(async () => {
    dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix))
    PgliteTemplate.copyTo(Path.join(dataDir, "data"))
    hooks = await WebhookReceiver.start()
    ;[server, browser] = await Promise.all([
      ServerProcess.startProcess({ DATA_DIR: Path.join(dataDir, "data"), ...env, COBRO_DEV_WEBHOOKS: "1" }),
      Chromium.launch()
    ])
  }, 180_000)

  afterAll(async () => {
    await browser?.close()
    const stopped = await server?.stop()
    await hooks?.close()
    if (dataDir) Fs.rmSync(dataDir, { recursive: true, force: true })
    expect(stopped?.code ?? 0).toBe(0)
  }, 60_000)

  return {
    get server() {
      return server!
    },
    get browser() {
      return browser!
    },
    get hooks() {
      return hooks!
    },
    call: (method, path, options = {}) =>
      ServerProcess.request(server!, method, path, {
        ...(options.body === undefined ? {} : { body: options.body }),
        headers: options.auth ? { authorization: options.auth } : {}
      })
  }
}
