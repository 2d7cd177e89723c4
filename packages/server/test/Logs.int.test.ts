/**
 * The logs of a full acceptance run (issue 34, "Logs that join them"; spec-decisions SV-37, SV-39):
 * a real server process with `COBRO_LOG_FORMAT=json` and `COBRO_LOG_LEVEL=debug` through every part
 * (a terminal sale notified to a signed production webhook, a link paid on its checkout page with a
 * card, an online intent paid with a card number, a key rotation, a panel user signing in with its
 * password), then: every line on stdout is one JSON object, and no line on stdout or stderr holds
 * any secret the run used or received.
 */
import { verifySignature } from "@cobro/webhooks/Signature"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as Path from "node:path"
import * as ServerProcess from "./support/ServerProcess.js"

/** A server process whose stdout and stderr are kept apart. */
interface LoggingServer extends ServerProcess.RunningServer {
  readonly stdout: () => string
  readonly stderr: () => string
}

/** The message of a JSON line, if it is one. */
const messageOf = (line: string): string | undefined => {
  try {
    const value = JSON.parse(line)
    return typeof value?.message === "string" ? value.message : undefined
  } catch {
    return undefined
  }
}

/** Runs the start script with `env` until its JSON banner says where it listens; killed with the scope. */
const startLogging = (env: Record<string, string>) =>
  Effect.acquireRelease(
    Effect.promise(async (): Promise<LoggingServer> => {
      const port = String(await ServerProcess.freePort())
      const child = spawn(process.execPath, [ServerProcess.startScript], {
        cwd: Path.dirname(Path.dirname(ServerProcess.startScript)),
        env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "", PORT: port, ...env },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let stdout = ""
      let stderr = ""
      child.stdout!.on("data", (chunk) => (stdout += chunk))
      child.stderr!.on("data", (chunk) => (stderr += chunk))
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => {
          child.kill("SIGKILL")
          reject(new Error(`no banner within ${ServerProcess.startTimeoutMillis} ms:\n${stdout}\n${stderr}`))
        }, ServerProcess.startTimeoutMillis)
        const onData = () => {
          for (const line of stdout.split("\n")) {
            const match = /^Cobro is listening on (\S+)/.exec(messageOf(line) ?? "")
            if (match !== null) {
              clearTimeout(timer)
              child.stdout!.off("data", onData)
              return resolve(match[1]!)
            }
          }
        }
        child.stdout!.on("data", onData)
        child.once("exit", (code) => {
          clearTimeout(timer)
          reject(new Error(`the server exited (${code}) before listening:\n${stdout}\n${stderr}`))
        })
      })
      return {
        url,
        adminToken: env["ADMIN_TOKEN"]!,
        output: () => stdout + stderr,
        stdout: () => stdout,
        stderr: () => stderr,
        stop: async (signal = "SIGTERM") => {
          const started = Date.now()
          const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) {
              resolve({ code: child.exitCode, signal: child.signalCode })
            } else child.once("exit", (code, signal) => resolve({ code, signal }))
          })
          child.kill(signal)
          const timer = setTimeout(() => child.kill("SIGKILL"), 30_000)
          const result = await done
          clearTimeout(timer)
          return { ...result, millis: Date.now() - started }
        }
      }
    }),
    (server) => Effect.promise(() => server.stop("SIGKILL"))
  )

/** The lines of `text` that are not one JSON object. */
const nonJsonLines = (text: string): ReadonlyArray<string> =>
  text
    .split("\n")
    .filter((line) => line !== "")
    .filter((line) => {
      try {
        const value = JSON.parse(line)
        return typeof value !== "object" || value === null || Array.isArray(value)
      } catch {
        return true
      }
    })

/** A secret and the forms it may be written in (its text, and its JSON-escaped or URL-encoded text). */
interface Secret {
  readonly name: string
  readonly forms: ReadonlyArray<string | RegExp>
}

/** A secret whose every form is its text as it is. */
const secret = (name: string, value: string, ...more: ReadonlyArray<string | RegExp>): Secret => ({
  name,
  forms: [value, encodeURIComponent(value), JSON.stringify(value).slice(1, -1), ...more]
})

/** The secrets `text` holds: each with the first line that holds it. */
const leaks = (text: string, secrets: ReadonlyArray<Secret>): ReadonlyArray<string> => {
  const lines = text.split("\n")
  const found: Array<string> = []
  for (const s of secrets) {
    for (const form of s.forms) {
      const line = lines.find((line) => (typeof form === "string" ? line.includes(form) : form.test(line)))
      if (line !== undefined) {
        found.push(`${s.name} in: ${line.slice(0, 500)}`)
        break
      }
    }
  }
  return found
}

/** The card number the sandbox approves, and a CVV (checked where a form or JSON would write it). */
const PAN = "4111111111111111"
const CVV = "8462"

/** The forms of the card number: bare, spaced in fours (the checkout form), dashed. */
const panSecret = secret(
  "card number",
  PAN,
  "4111 1111 1111 1111",
  "4111-1111-1111-1111",
  "4111+1111+1111+1111"
)

/** The CVV as a form value, a JSON string or number, an annotation. */
const cvvSecret: Secret = {
  name: "CVV",
  forms: [`=${CVV}`, `"${CVV}"`, `: ${CVV}`, `:${CVV},`, `:${CVV}}`, new RegExp(`cvc\\W{0,4}${CVV}`, "i")]
}

describe("the logs of an acceptance run (COBRO_LOG_FORMAT=json, COBRO_LOG_LEVEL=debug)", () => {
  it("the scanner finds a secret in any form a line could hold it, and a non-JSON line", () => {
    const token = "tok-" + randomBytes(8).toString("hex")
    const secrets = [secret("admin token", token), panSecret, cvvSecret]
    expect(leaks(JSON.stringify({ message: `Bearer ${token}` }), secrets)).toHaveLength(1)
    expect(leaks(`{"message":"card_number=4111+1111+1111+1111&card_cvc=${CVV}"}`, secrets)).toHaveLength(2)
    expect(leaks(JSON.stringify({ body: { card_number: PAN, cvv: CVV } }), secrets)).toHaveLength(2)
    expect(leaks(JSON.stringify({ message: "paid with 4111 1111 1111 1111" }), secrets)).toHaveLength(1)
    expect(
      leaks(JSON.stringify({ message: "card ending 1111", at: "2026-12-02T07:27:03.846Z" }), secrets)
    ).toEqual([])
    expect(nonJsonLines('{"level":"INFO"}\nCobro stopped.\n')).toEqual(["Cobro stopped."])
    expect(nonJsonLines('{"level":"INFO"}\n{"message":"x"}\n')).toEqual([])
  })

  it.scopedLive(
    "every stdout line is JSON, and no secret used or received is in any line",
    Effect.fnUntraced(function* () {
      const adminToken = `admin-${randomBytes(18).toString("base64url")}`
      const sealingKey = randomBytes(32).toString("hex")
      const checkpointKey = randomBytes(32).toString("hex")
      const password = `pw-${randomBytes(12).toString("base64url")}`
      const hook = yield* ServerProcess.webhookReceiver
      const server = yield* startLogging({
        ...(yield* ServerProcess.pgliteEnv),
        COBRO_LOG_FORMAT: "json",
        COBRO_LOG_LEVEL: "debug",
        COBRO_DEV_WEBHOOKS: "1",
        ADMIN_TOKEN: adminToken,
        COBRO_SEALING_KEY: sealingKey,
        COBRO_CHECKPOINT_KEY: checkpointKey,
        COBRO_CHECKPOINT_EVERY_SECONDS: "1"
      })
      const call = ServerProcess.call
      const withKey = ServerProcess.withKey

      // The merchant: keys, a terminal, terminal and link methods, a production webhook (signed with the secret key).
      const { keys, merchantId } = yield* ServerProcess.merchantWithTerminal(server, {
        name: "Tienda Logs",
        serial: "SN-LOGS",
        methods: { terminal: { POS: true }, link: { CREDIT_CARD: { min: 1000, max: 5000000 } } },
        webhook: { url: hook.url, mode: "production" }
      })

      // A3: a production sale on the simulated terminal, notified to the webhook.
      const sale = yield* withKey(
        server,
        keys.terminal_api.production.identity_key,
        "POST",
        "/payments/app-checkout",
        ServerProcess.terminalSale("SN-LOGS")
      )
      expect(sale.status, sale.text).toBe(201)
      // A3 in test mode, with a request id of the client's: echoed.
      const testSale = yield* call(server, "POST", "/payments/app-checkout", {
        headers: {
          authorization: `x-api-key ${keys.terminal_api.test.identity_key}`,
          "x-request-id": "sale-test-1"
        },
        body: ServerProcess.terminalSale("SN-LOGS", "order-43")
      })
      expect(testSale.status, testSale.text).toBe(201)
      expect(testSale.headers["x-request-id"]).toBe("sale-test-1")

      // B2 and the checkout page: a link paid with a card (number, expiry, CVV).
      const button = keys.payment_button.test.identity_key as string
      const link = yield* withKey(server, button, "POST", "/online/link/v1", {
        amount_type: "CLOSE",
        amount: { total_amount: 50_000 }
      })
      expect(link.status, link.text).toBe(201)
      const page = new URL(link.json.payload.url).pathname
      const paid = yield* Effect.promise(() =>
        fetch(server.url + page, {
          method: "POST",
          redirect: "manual",
          headers: { "content-type": "application/x-www-form-urlencoded", "x-request-id": "checkout-1" },
          body: new URLSearchParams({
            method: "CREDIT_CARD",
            card_number: "4111 1111 1111 1111",
            card_name: "Ana Gómez",
            card_expiry: "12/30",
            card_cvc: CVV,
            installments: "1"
          }).toString()
        })
      )
      expect(paid.status).toBe(303)
      expect(paid.headers.get("x-request-id")).toBe("checkout-1")

      // C1 and C4: an online intent paid with a card number.
      const intent = yield* withKey(
        server,
        button,
        "POST",
        "/v1/payment-intent",
        ServerProcess.onlineIntent("logs-1", 25_000)
      )
      expect(intent.status, intent.text).toBe(201)
      const attempt = yield* withKey(
        server,
        button,
        "POST",
        "/v1/payment",
        ServerProcess.cardAttempt("logs-1")
      )
      expect(attempt.status, attempt.text).toBe(201)
      expect(attempt.headers["x-request-id"]).toMatch(/^req_/)

      // A key rotated: the new pair is a secret too.
      const rotated = yield* ServerProcess.asAdmin(
        server,
        "POST",
        `/admin/v1/merchants/${merchantId}/keys/rotate`,
        {
          integration: "payment_button",
          mode: "production"
        }
      )
      expect(rotated.status, rotated.text).toBe(200)

      // A panel user: created with its password, a wrong sign-in, then the right one.
      const user = yield* ServerProcess.asAdmin(server, "POST", `/admin/v1/merchants/${merchantId}/users`, {
        email: "ana@example.com",
        password,
        role: "full_access"
      })
      expect(user.status, user.text).toBe(201)
      const signIn = (pass: string) =>
        Effect.gen(function* () {
          const form = yield* call(server, "GET", "/panel/login")
          const cookie = /cobro_panel_login=[^;]+/.exec(form.headers["set-cookie"] ?? "")![0]
          const csrf = /name="csrf" value="([^"]+)"/.exec(form.text)![1]!
          return yield* Effect.promise(() =>
            fetch(`${server.url}/panel/login`, {
              method: "POST",
              redirect: "manual",
              headers: { "content-type": "application/x-www-form-urlencoded", cookie },
              body: new URLSearchParams({ csrf, email: "ana@example.com", password: pass }).toString()
            })
          )
        })
      const wrong = yield* signIn(`${password}-wrong`)
      expect(wrong.status).not.toBe(303)
      const right = yield* signIn(password)
      expect(right.status).toBe(303)
      const session = /cobro_panel=([^;]+)/.exec(right.headers.get("set-cookie") ?? "")![1]!
      const panel = yield* call(server, "GET", "/panel", { headers: { cookie: `cobro_panel=${session}` } })
      expect(panel.status).toBeLessThan(400)

      // The webhook of the sale, signed with the production secret key.
      const delivered = yield* ServerProcess.within(
        30_000,
        () => `no webhook received; output:\n${server.output()}`,
        Effect.sync(() => hook.received.length),
        (n) => n > 0
      ).pipe(Effect.as(hook.received[0]!))
      const signingSecret = keys.terminal_api.production.secret_key as string
      expect(verifySignature(delivered.body, delivered.headers["x-service-signature"], signingSecret)).toBe(
        true
      )

      // The server stops: its last line is JSON too.
      yield* ServerProcess.stopsCleanly(server)

      const secrets: Array<Secret> = [
        secret("admin token", adminToken),
        secret("sealing key", sealingKey, Buffer.from(sealingKey, "hex").toString("base64")),
        secret("checkpoint key", checkpointKey, Buffer.from(checkpointKey, "hex").toString("base64")),
        secret("panel password", password),
        secret("wrong panel password", `${password}-wrong`),
        secret("panel session", session),
        panSecret,
        cvvSecret
      ]
      for (const integration of ["terminal_api", "payment_button"] as const) {
        for (const mode of ["test", "production"] as const) {
          secrets.push(secret(`${integration} ${mode} identity key`, keys[integration][mode].identity_key))
          const secretKey: string = keys[integration][mode].secret_key
          // The test mode's secret key is empty (test webhooks are signed with the empty key).
          if (secretKey !== "") secrets.push(secret(`${integration} ${mode} secret key`, secretKey))
        }
      }
      secrets.push(secret("rotated identity key", rotated.json.identity_key))
      if (rotated.json.secret_key) secrets.push(secret("rotated secret key", rotated.json.secret_key))

      const stdout = server.stdout()
      const lines = stdout.split("\n").filter((line) => line !== "")
      expect(nonJsonLines(stdout), stdout).toEqual([])
      // The run logged: the banner and the stop are lines of their own, each with a level and a time.
      expect(lines.map(messageOf)).toContain("Cobro stopped.")
      // At debug each request is logged (RequestTelemetry), with the request id the client sent.
      expect(
        lines.map((line) => JSON.parse(line)).filter((line) => line.request_id === "sale-test-1"),
        stdout
      ).not.toEqual([])
      for (const line of lines) {
        expect(JSON.parse(line)).toMatchObject({ level: expect.any(String), timestamp: expect.any(String) })
      }
      expect(leaks(stdout, secrets), stdout).toEqual([])
      expect(leaks(server.stderr(), secrets), server.stderr()).toEqual([])
    }),
    { timeout: 180_000 }
  )
})
