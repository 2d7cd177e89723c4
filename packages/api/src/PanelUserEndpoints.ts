/**
 * The operator's door to the merchant panel's users (issue 22, "Users and sign-in"):
 * `POST /admin/v1/merchants/{merchant_id}/users` creates a user who signs in at `/panel`;
 * `GET …/users` lists the merchant's users (newest first, paged as the operator's other lists);
 * `PATCH …/users/{user_id}` changes a user's role, sets a new password, disables it or enables it
 * again; each change is an event with the operator (`admin`) as actor.
 * Calls carry `Authorization: Bearer <ADMIN_TOKEN>`. The password goes in and never comes out: no
 * answer, error message or log line carries it or its hash.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as PanelAccess from "@cobro/domain/PanelAccess"
import * as PanelUser from "@cobro/domain/PanelUser"
import type * as PanelUserList from "@cobro/domain/PanelUserList"
import * as DateTime from "effect/DateTime"
import * as Schema from "effect/Schema"
import { listOf, pageParams } from "./AdminListEndpoints.js"
import * as Security from "./Security.js"
import * as Errors from "./Errors.js"
import { withJsonBody } from "./JsonBody.js"

/**
 * The codes of the call's own errors (besides `ValidationError` on `email` or `password` and
 * `MerchantNotFound`).
 *
 * @category constants
 */
export const Codes = {
  /** 409: a panel user with this email exists already, of this merchant or another. */
  UserAlreadyExists: "UserAlreadyExists",
  /** 404: no user of this merchant has this id (an id of another merchant's user included). */
  UserNotFound: "UserNotFound",
  /** 409: the user is disabled: its role and password change once it is enabled again. */
  UserDisabled: "UserDisabled"
} as const

/**
 * `POST /admin/v1/merchants/{merchant_id}/users`. The messages of a malformed field never quote it
 * (a password must not come back in an error).
 *
 * @category schemas
 */
export const CreateUserRequest = Schema.Struct({
  email: Schema.String.annotations({
    description: "The user's email address; kept lower-cased. One email is one user across Cobro.",
    message: () => "email must be an email address: name@example.com"
  }),
  password: Schema.String.annotations({
    description: `${PanelAccess.MIN_PASSWORD_LENGTH} to ${PanelAccess.MAX_PASSWORD_LENGTH} characters; stored only as its scrypt hash.`,
    message: () =>
      `password must be a text of ${PanelAccess.MIN_PASSWORD_LENGTH} to ${PanelAccess.MAX_PASSWORD_LENGTH} characters`
  }),
  role: PanelUser.Role.annotations({
    description: "full_access: everything; read_only: sees everything and changes nothing."
  })
}).annotations({ identifier: "AdminCreatePanelUser" })

/**
 * 201: the user as created.
 *
 * @category schemas
 */
export const UserBody = Schema.Struct({
  user_id: Schema.String,
  merchant_id: Schema.String,
  email: Schema.String,
  role: PanelUser.Role,
  created: Schema.String.annotations({ description: "ISO 8601, UTC" })
}).annotations({ identifier: "AdminPanelUser" })

/**
 * The 201 body of a created user (and `cobro user create --json`'s output).
 *
 * @category constructors
 */
export const userBody = (user: PanelAccess.UserView): typeof UserBody.Type => ({
  user_id: user.userId,
  merchant_id: user.merchantId,
  email: user.email,
  role: user.role,
  created: DateTime.formatIso(user.createdAt)
})

const Iso = Schema.String.annotations({ description: "ISO 8601, UTC" })

/**
 * A panel user as the list and `PATCH` show it (never its password or hash).
 *
 * @category schemas
 */
export const UserRow = Schema.Struct({
  id: Schema.String.annotations({ description: "The user id (USR_…): the row's cursor" }),
  merchant_id: Schema.String,
  email: Schema.String,
  role: PanelUser.Role,
  status: PanelUser.Status.annotations({
    description: "ACTIVE signs in; DISABLED does not until enabled again (its email stays taken)"
  }),
  created_at: Iso,
  last_sign_in_at: Schema.NullOr(Iso).annotations({ description: "ISO 8601, UTC; null: never signed in" }),
  history_url: Schema.String.annotations({
    description: "The path of the user's history: /admin/v1/streams/{stream_id}/history"
  })
}).annotations({ identifier: "AdminPanelUserRow" })

/**
 * The row of a user.
 *
 * @category constructors
 */
export const userRow = (row: PanelUserList.Row): typeof UserRow.Type => ({
  id: row.userId,
  merchant_id: row.merchantId,
  email: row.email,
  role: row.role,
  status: row.status,
  created_at: row.createdAt.toISOString(),
  last_sign_in_at: row.lastSignInAt === null ? null : row.lastSignInAt.toISOString(),
  history_url: `/admin/v1/streams/${encodeURIComponent(`PanelUser-${row.userId}`)}/history`
})

/**
 * `GET /admin/v1/merchants/{merchant_id}/users`: a list in Stripe's shape.
 *
 * @category schemas
 */
export const UserList = listOf(UserRow, "AdminPanelUserList")

/**
 * The list's query: the operator's lists' paging (`AdminListEndpoints`).
 *
 * @category schemas
 */
export const ListUsersParams = Schema.Struct(pageParams)

/**
 * `PATCH /admin/v1/merchants/{merchant_id}/users/{user_id}`: at least one member; any other member is
 * a 400. Messages never quote a member (a password must not come back in an error).
 *
 * @category schemas
 */
export const PatchUserRequest = Schema.Struct({
  role: Schema.optionalWith(
    PanelUser.Role.annotations({
      description:
        "The new role: the user's open sessions have it from their next request (they read the user's role at each), and end."
    }),
    { exact: true }
  ),
  password: Schema.optionalWith(
    Schema.String.annotations({
      description: `A new password, ${PanelAccess.MIN_PASSWORD_LENGTH} to ${PanelAccess.MAX_PASSWORD_LENGTH} characters, stored only as its scrypt hash: the user's sessions end and the failed sign-ins in a row are forgiven.`,
      message: () => ({
        message: `password must be a text of ${PanelAccess.MIN_PASSWORD_LENGTH} to ${PanelAccess.MAX_PASSWORD_LENGTH} characters`,
        override: true
      })
    }),
    { exact: true }
  ),
  disabled: Schema.optionalWith(
    Schema.Boolean.annotations({
      description:
        "true disables the user: its sessions stop working at once and it signs in no more; false enables a disabled user again, with its role and password.",
      message: () => ({ message: "disabled must be true or false", override: true })
    }),
    { exact: true }
  )
}).annotations({ identifier: "AdminPatchPanelUser" })

const MerchantPath = Schema.Struct({ merchant_id: Schema.String })
const UserPath = Schema.Struct({ merchant_id: Schema.String, user_id: Schema.String })

/**
 * The panel users group.
 *
 * @category groups
 */
export class PanelUserGroup extends HttpApiGroup.make("panelUsers")
  .add(
    HttpApiEndpoint.post("createPanelUser", "/admin/v1/merchants/:merchant_id/users")
      .setPath(MerchantPath)
      .pipe(withJsonBody(CreateUserRequest))
      .addSuccess(UserBody, { status: 201 })
      .annotate(
        OpenApi.Description,
        "Creates a user of the merchant panel: 201 with the user (never the password). 400 `ValidationError` naming `email` (not an address) or `password` (not 12 to 256 characters) or `role`; 404 `MerchantNotFound`; 409 `UserAlreadyExists` when the email is any merchant's user already. Under an `Idempotency-Key` the password is left out of the request's fingerprint: a retry with another password answers the first response."
      )
  )
  .add(
    HttpApiEndpoint.get("listPanelUsers", "/admin/v1/merchants/:merchant_id/users")
      .setPath(MerchantPath)
      .setUrlParams(ListUsersParams)
      .addSuccess(UserList)
      .annotate(
        OpenApi.Description,
        "The merchant's panel users, newest first. `limit` 1–100 (default 10); `starting_after` (older rows) or `ending_before` (newer rows), a row's `id`, not both; an id that is no row of the list is a 400. 404 `MerchantNotFound`."
      )
  )
  .add(
    HttpApiEndpoint.patch("patchPanelUser", "/admin/v1/merchants/:merchant_id/users/:user_id")
      .setPath(UserPath)
      .pipe(withJsonBody(PatchUserRequest))
      .addSuccess(UserRow)
      .annotate(
        OpenApi.Description,
        "Changes a panel user: `disabled: false` enables a disabled user again (first), `role` sets its role, `password` a new password, `disabled: true` disables it (last); each is an event with the actor `admin`. Every panel request reads the user's status and role as they are now, so a role change or a disable holds from the browser's next request, and a new password or a disable ends the user's sessions. The same role again, disabling a disabled user or enabling an active one is a 200 that changes nothing. Under an `Idempotency-Key` the password is left out of the request's fingerprint. 200 with the user; 400 `ValidationError` (no member, another member, a role that is none, a password not 12 to 256 characters: nothing changes); 404 `MerchantNotFound`, `UserNotFound` (also for another merchant's user); 409 `UserDisabled` for a role or password change of a disabled user not enabled in the same call."
      )
  )
  .addError(Errors.BadRequest)
  .addError(Errors.NotFound)
  .addError(Errors.Conflict)
  .middleware(Security.Admin)
  .annotate(OpenApi.Title, "admin: panel users")
  .annotate(
    OpenApi.Description,
    "Operator API: the users of the merchant panel. `Authorization: Bearer <ADMIN_TOKEN>`."
  ) {}
