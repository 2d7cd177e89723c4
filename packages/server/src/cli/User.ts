/**
 * `cobro user create` (issue 22, "Users and sign-in"): a user of the merchant panel, made by the use
 * case `POST /admin/v1/merchants/{merchant_id}/users` calls (one implementation, two doors), with the
 * actor `cli:<login>`; `cobro user password` (issue 31): a new password set by the operator, as
 * `PATCH …/users/{user_id}` with `password` sets it, which ends the user's sessions. The password is
 * read from `COBRO_USER_PASSWORD`, else from standard input (a hidden prompt on a terminal, the first
 * line of a pipe), never from the command line, whose arguments any user of the machine can read in
 * `ps`.
 */
import * as Prompt from "@effect/cli/Prompt"
import type * as Terminal from "@effect/platform/Terminal"
import type * as Merchant from "@cobro/domain/Merchant"
import * as PanelAccess from "@cobro/domain/PanelAccess"
import * as PanelUser from "@cobro/domain/PanelUser"
import * as PanelUserEndpoints from "@cobro/api/PanelUserEndpoints"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Admin from "./Admin.js"
import { UserError } from "./CliError.js"
import * as Output from "./Output.js"

/** The environment variable the password may come in. */
export const PASSWORD_VARIABLE = "COBRO_USER_PASSWORD"

/**
 * The first line of standard input (a pipe or a file), without its line ending: read up to the first
 * line break or the end, whichever comes first, so that a pipe held open does not hold the command.
 */
const readFirstLine = Effect.async<string>((resume) => {
  let text = ""
  let finished = false
  const done = () => {
    if (finished) return
    finished = true
    process.stdin.off("data", onData)
    process.stdin.pause()
    const newline = text.search(/\r?\n/)
    resume(Effect.succeed(newline === -1 ? text : text.slice(0, newline)))
  }
  const onData = (chunk: Buffer) => {
    text += chunk.toString("utf8")
    if (/\r?\n/.test(text)) done()
  }
  process.stdin.on("data", onData)
  process.stdin.once("end", done)
  process.stdin.once("error", done)
})

const noPassword = new UserError({
  message: `no password: set ${PASSWORD_VARIABLE}, or give it on standard input (it is never an argument)`
})

/**
 * A password: `COBRO_USER_PASSWORD` when set, else a hidden prompt (`prompt`) on a terminal, else
 * the first line of standard input (its line ending dropped).
 */
const readPasswordWith = (
  prompt: string,
  cancelled: string
): Effect.Effect<Redacted.Redacted<string>, UserError, Terminal.Terminal> =>
  Effect.suspend(() => {
    const fromEnvironment = process.env[PASSWORD_VARIABLE]
    if (fromEnvironment !== undefined && fromEnvironment !== "")
      return Effect.succeed(Redacted.make(fromEnvironment))
    if (process.stdin.isTTY === true) {
      return Prompt.password({ message: prompt }).pipe(
        Effect.mapError(() => new UserError({ message: cancelled }))
      )
    }
    return Effect.flatMap(readFirstLine, (line) =>
      line === "" ? Effect.fail(noPassword) : Effect.succeed(Redacted.make(line))
    )
  })

/** The new user's password (see {@link readPasswordWith}). */
export const readPassword: Effect.Effect<
  Redacted.Redacted<string>,
  UserError,
  Terminal.Terminal
> = readPasswordWith("Password of the new panel user", "cancelled: no user was created")

/** A refusal in one sentence. */
export const describeError = (
  input: { readonly merchant: string; readonly email: string },
  error:
    | PanelAccess.InvalidEmail
    | PanelAccess.WeakPassword
    | PanelAccess.UserAlreadyExists
    | Merchant.MerchantNotFound
): string => {
  switch (error._tag) {
    case "InvalidEmail":
      return `--email must be an email address (name@example.com), not '${input.email}'`
    case "WeakPassword":
      return `the password must be ${error.minLength} to ${error.maxLength} characters`
    case "MerchantNotFound":
      return `no merchant '${input.merchant}'`
    case "UserAlreadyExists":
      return `a panel user with the email '${input.email.trim().toLowerCase()}' exists already`
  }
}

/** `cobro user create --merchant MER_… --email … --role full_access|read_only`. */
export const create = (
  input: { readonly merchant: string; readonly email: string; readonly role: PanelUser.Role },
  options: { readonly json: boolean }
) =>
  Effect.gen(function* () {
    const password = yield* readPassword
    const user = yield* PanelAccess.createUser(
      {
        merchantId: input.merchant,
        email: input.email,
        password: Redacted.value(password),
        role: input.role
      },
      { actor: Admin.actor() }
    ).pipe(Effect.mapError((error) => new UserError({ message: describeError(input, error) })))
    yield* Output.line(
      options.json
        ? JSON.stringify(PanelUserEndpoints.userBody(user))
        : `Panel user ${user.userId} (${user.email}, ${user.role}) created for merchant ${user.merchantId}; they sign in at /panel.`
    )
  })

/** A refusal of a new password in one sentence. */
export const describePasswordError = (
  input: { readonly email: string },
  error: PanelAccess.WeakPassword | PanelAccess.UserNotFound | PanelUser.UserNotInState
): string => {
  switch (error._tag) {
    case "WeakPassword":
      return `the password must be ${error.minLength} to ${error.maxLength} characters`
    case "UserNotFound":
      return `no panel user has the email '${PanelUser.normalizeEmail(input.email)}'`
    case "UserNotInState":
      return `the panel user '${PanelUser.normalizeEmail(input.email)}' is disabled: enable it first (PATCH …/users/{user_id} with "disabled": false)`
  }
}

/**
 * `cobro user password --email …`: sets a new password (`PanelAccess.changePassword`, the use case
 * of `PATCH …/users/{user_id}` with `password`), with the actor `cli:<login>`; the user's sessions end.
 */
export const setPassword = (input: { readonly email: string }, options: { readonly json: boolean }) =>
  Effect.gen(function* () {
    const password = yield* readPasswordWith(
      "New password of the panel user",
      "cancelled: the password was not changed"
    )
    const userId = PanelUser.userIdOf(input.email)
    yield* PanelAccess.changePassword(userId, Redacted.value(password), { actor: Admin.actor() }).pipe(
      Effect.mapError((error) => new UserError({ message: describePasswordError(input, error) }))
    )
    const email = PanelUser.normalizeEmail(input.email)
    yield* Output.line(
      options.json
        ? JSON.stringify({ user_id: userId, email })
        : `New password set for panel user ${userId} (${email}); their sessions have ended.`
    )
  })
