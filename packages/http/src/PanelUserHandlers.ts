/**
 * Handlers of the panel users group over `PanelAccess`, the use cases `cobro user create` calls too;
 * the list is `Listings.users` (a read model in the store), one user is `PanelUserList.find` (its
 * stream). Domain errors become envelope errors here; the actor of the events is `admin`.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as Merchant from "@cobro/domain/Merchant"
import * as PanelAccess from "@cobro/domain/PanelAccess"
import * as PanelUserList from "@cobro/domain/PanelUserList"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { CobroApi } from "@cobro/api/Api"
import * as Errors from "@cobro/api/Errors"
import * as PanelUserEndpoints from "@cobro/api/PanelUserEndpoints"
import * as MerchantList from "./MerchantList.js"
import * as RequestBody from "./RequestBody.js"

const V = Errors.Codes.ValidationError

/** The envelope error of a refused creation. */
export const fromCreateError = (
  error:
    | PanelAccess.InvalidEmail
    | PanelAccess.WeakPassword
    | PanelAccess.UserAlreadyExists
    | Merchant.MerchantNotFound
): Errors.BadRequest | Errors.NotFound | Errors.Conflict => {
  switch (error._tag) {
    case "InvalidEmail":
      return Errors.BadRequest.of(V, "email must be an email address: name@example.com", "email")
    case "WeakPassword":
      return Errors.BadRequest.of(
        V,
        `password must be ${error.minLength} to ${error.maxLength} characters`,
        "password"
      )
    case "MerchantNotFound":
      return Errors.NotFound.of(Errors.Codes.MerchantNotFound, "no merchant with this id")
    case "UserAlreadyExists":
      return Errors.Conflict.of(
        PanelUserEndpoints.Codes.UserAlreadyExists,
        "a panel user with this email exists already",
        "email"
      )
  }
}

const ACTOR = { actor: "admin" }

const invalid = (message: string, field?: string) => Errors.BadRequest.of(V, message, field)

const { existingMerchant } = MerchantList

const userNotFound = () =>
  Errors.NotFound.of(
    PanelUserEndpoints.Codes.UserNotFound,
    "no panel user of this merchant has this id",
    "user_id"
  )

const userDisabled = (field: "role" | "password") =>
  Errors.Conflict.of(
    PanelUserEndpoints.Codes.UserDisabled,
    `the user is disabled: its ${field} changes once it is enabled again (disabled: false)`,
    field
  )

/** The user of the merchant, or the 404 (an unknown id, or another merchant's user). */
const userOf = (merchantId: string, userId: string) =>
  Effect.flatMap(
    PanelUserList.find(merchantId, userId),
    Option.match({
      onNone: () => Effect.fail(userNotFound()),
      onSome: Effect.succeed
    })
  )

/** `GET …/users`: the merchant's users, newest first. */
const list = Effect.fn("PanelUserHandlers.list")(function* (
  merchantId: string,
  params: typeof PanelUserEndpoints.ListUsersParams.Type
) {
  return yield* MerchantList.make(
    merchantId,
    "users",
    params,
    (listings, page) => listings.users(merchantId, {}, page),
    PanelUserEndpoints.userRow
  )
})

/**
 * `PATCH …/users/{user_id}`: every member checked before any change; then the enabling, the role,
 * the password and the disabling, in this order, each over its `PanelAccess` use case; the user as
 * it is after them.
 */
const patch = Effect.fn("PanelUserHandlers.patch")(function* (merchantId: string, userId: string) {
  const body = yield* RequestBody.decode(PanelUserEndpoints.PatchUserRequest, { onExcessProperty: "error" })
  if (body.role === undefined && body.disabled === undefined && body.password === undefined) {
    return yield* invalid("give role, password or disabled")
  }
  if (body.password !== undefined) {
    yield* PanelAccess.validatePassword(body.password).pipe(
      Effect.mapError((weak) =>
        invalid(`password must be ${weak.minLength} to ${weak.maxLength} characters`, "password")
      )
    )
  }
  yield* existingMerchant(merchantId)
  const user = yield* userOf(merchantId, userId)
  const enabled = user.status === "ACTIVE" || body.disabled === false
  if (!enabled && body.role !== undefined) return yield* userDisabled("role")
  if (!enabled && body.password !== undefined) return yield* userDisabled("password")
  if (body.disabled === false) {
    yield* PanelAccess.enableUser(user.userId, ACTOR).pipe(Effect.catchTag("UserNotFound", Effect.die))
  }
  if (body.role !== undefined) {
    yield* PanelAccess.changeRole(user.userId, body.role, ACTOR).pipe(
      Effect.catchTags({ UserNotInState: () => Effect.fail(userDisabled("role")), UserNotFound: Effect.die })
    )
  }
  if (body.password !== undefined) {
    yield* PanelAccess.changePassword(user.userId, body.password, ACTOR).pipe(
      Effect.catchTags({
        UserNotInState: () => Effect.fail(userDisabled("password")),
        WeakPassword: Effect.die,
        UserNotFound: Effect.die
      })
    )
  }
  if (body.disabled === true) {
    yield* PanelAccess.disableUser(user.userId, ACTOR).pipe(Effect.catchTag("UserNotFound", Effect.die))
  }
  return PanelUserEndpoints.userRow(yield* userOf(merchantId, userId))
})

/** The panel users handlers. */
export const layer = HttpApiBuilder.group(CobroApi, "panelUsers", (handlers) =>
  handlers
    .handleRaw("createPanelUser", ({ path }) =>
      Effect.gen(function* () {
        const body = yield* RequestBody.decode(PanelUserEndpoints.CreateUserRequest)
        const user = yield* PanelAccess.createUser(
          { merchantId: path.merchant_id, email: body.email, password: body.password, role: body.role },
          ACTOR
        ).pipe(Effect.mapError(fromCreateError))
        return PanelUserEndpoints.userBody(user)
      })
    )
    .handle("listPanelUsers", ({ path, urlParams }) => list(path.merchant_id, urlParams))
    .handleRaw("patchPanelUser", ({ path }) => patch(path.merchant_id, path.user_id))
)
