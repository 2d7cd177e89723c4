/**
 * `cobro`: the command tree (issue 7) on `@effect/cli`. Audit commands run over the log alone
 * (`Environment.layerLog`); admin commands over the server's store and key vault
 * (`Environment.layerAdmin`). Each handler provides its own layer, so `cobro --help` opens nothing.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Admin from "./Admin.js"
import * as Audit from "./Audit.js"
import { UserError } from "./CliError.js"
import * as Environment from "./Environment.js"
import * as Transparency from "./Transparency.js"
import * as Listen from "./Listen.js"
import * as Trigger from "./Trigger.js"
import * as User from "./User.js"

const json = Options.boolean("json").pipe(
  Options.withDescription("print JSON (one object per line) instead of text")
)
const merchant = Options.text("merchant").pipe(Options.withDescription("the merchant's id, MER_…"))
const serial = Options.text("serial").pipe(Options.withDescription("the terminal's serial number"))
const mode = Options.choice("mode", ["test", "production"]).pipe(
  Options.withDescription("which keys or webhook: test (the sandbox) or production")
)

const id = Args.text({ name: "id" }).pipe(
  Args.withDescription(
    "a resource id: MER_…, LNK_…, INT_…, TRX_…, RFD_…, a notification's UUID, MER_…:test:<reference_id> (an intent), MER_…/<serial> or MER_…:live/<serial> (a simulated terminal's sandbox or production device), USR_… (a panel user), or a stream id"
  )
)

const onLog = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, Environment.layerLog)
const onAdmin = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, Environment.layerAdmin)

/** A command that only groups `subcommands`: run alone, it says which to choose. */
const group = <
  const Subcommands extends readonly [
    Command.Command<any, any, any, any>,
    ...Array<Command.Command<any, any, any, any>>
  ]
>(
  name: string,
  description: string,
  subcommands: Subcommands
) => {
  const choices = subcommands.map((command) => `${name} ${Array.from(Command.getNames(command))[0]}`)
  return Command.make(name, {}, () =>
    Effect.fail(new UserError({ message: `choose a command: ${choices.join(", ")} (--help for more)` }))
  ).pipe(Command.withDescription(description), Command.withSubcommands(subcommands))
}

const history = Command.make("history", { id, json }, ({ id, json }) =>
  onLog(Audit.history(id, { json }))
).pipe(Command.withDescription("every event of a resource with its time, type, actor and the state after it"))

const state = Command.make(
  "state",
  {
    id,
    at: Options.text("at").pipe(
      Options.withPseudoName("instant"),
      Options.withDescription(
        "an ISO-8601 instant with its zone: 2026-01-31T14:30:00Z, 2026-01-31T09:30:00-05:00"
      )
    ),
    json
  },
  ({ at, id, json }) => onLog(Audit.stateAt(id, at, { json }))
).pipe(Command.withDescription("the state of a resource as it was at an instant"))

const file = (name: string, description: string) =>
  Options.text(name).pipe(
    Options.withPseudoName("FILE"),
    Options.optional,
    Options.withDescription(description)
  )
const checkpointFile = file(
  "checkpoint",
  "a signed checkpoint, as cobro audit checkpoint or GET /audit/v1/checkpoints/latest gave it"
)
const publicKeyFile = file(
  "public-key",
  "the log's public key, as cobro audit public-key printed it (default: the configured key's)"
)

const verify = Command.make(
  "verify",
  {
    exportFile: file(
      "export",
      "check this export (cobro audit export) against --checkpoint with --public-key, without the database"
    ),
    checkpoint: checkpointFile,
    publicKey: publicKeyFile,
    json
  },
  ({ checkpoint, exportFile, json, publicKey }) =>
    Option.match(exportFile, {
      onNone: () =>
        Option.isSome(checkpoint) || Option.isSome(publicKey)
          ? Effect.fail(
              new UserError({
                message:
                  "--checkpoint and --public-key go with --export FILE (an export checked without the database)"
              })
            )
          : onLog(Audit.verify({ json })),
      onSome: (path) => Transparency.verifyExport({ exportFile: path, checkpoint, publicKey, json })
    })
).pipe(
  Command.withDescription(
    "check every stream's hash chain and version sequence, and the read models' checkpoints; with --export, check an export against a signed checkpoint offline; exit 1 when anything is broken"
  )
)

const rebuild = Command.make(
  "rebuild",
  {
    projections: Args.text({ name: "projection" }).pipe(
      Args.repeated,
      Args.withDescription("read models to rebuild (all when none is named)")
    )
  },
  ({ projections }) => onLog(Audit.rebuild(projections))
).pipe(Command.withDescription("rebuild read models from the log (in shadow tables, then a short swap)"))

const exportLog = Command.make(
  "export",
  {
    since: Options.text("since").pipe(
      Options.withPseudoName("instant"),
      Options.optional,
      Options.withDescription("only events recorded at or after this ISO-8601 instant")
    ),
    until: Options.text("until").pipe(
      Options.withPseudoName("instant"),
      Options.optional,
      Options.withDescription("only events recorded before this ISO-8601 instant")
    )
  },
  ({ since, until }) => onLog(Audit.exportLog({ since, until }))
).pipe(Command.withDescription("the log as JSON lines on stdout, in commit order"))

const publicKey = Command.make("public-key", {}, () => Transparency.publicKey).pipe(
  Command.withDescription("print the log's public key (the verifier key its checkpoints are signed with)")
)

const checkpoint = Command.make("checkpoint", {}, () => onLog(Transparency.checkpoint)).pipe(
  Command.withDescription(
    "add every settled event to the log's Merkle tree and print a checkpoint signed now (a signed note)"
  )
)

const prove = Command.make(
  "prove",
  {
    eventId: Args.text({ name: "event_id" }).pipe(
      Args.withDescription("an event's UUID (the eventId of cobro audit export)")
    ),
    checkpoint: checkpointFile,
    publicKey: publicKeyFile,
    json
  },
  (options) =>
    Effect.flatMap(Transparency.proveRequest(options), (request) => onLog(Transparency.prove(request)))
).pipe(
  Command.withDescription(
    "check that an event, as stored, is in the tree a checkpoint signs (default: the latest); exit 1 when not"
  )
)

const consistency = Command.make(
  "consistency",
  {
    older: Args.text({ name: "old_checkpoint" }).pipe(
      Args.withDescription("the older signed checkpoint's file")
    ),
    newer: Args.text({ name: "new_checkpoint" }).pipe(
      Args.withDescription("the newer signed checkpoint's file")
    ),
    publicKey: publicKeyFile
  },
  (options) =>
    Effect.flatMap(Transparency.consistencyRequest(options), (request) =>
      onLog(Transparency.consistency(request))
    )
).pipe(
  Command.withDescription(
    "check that the log a newer checkpoint signs extends the one an older checkpoint signs, unchanged; exit 1 when not"
  )
)

const audit = group("audit", "the auditor's tools over the event log (the server need not run)", [
  history,
  state,
  verify,
  rebuild,
  exportLog,
  publicKey,
  checkpoint,
  prove,
  consistency
])

const merchantCreate = Command.make(
  "create",
  { name: Options.text("name").pipe(Options.withDescription("the merchant's name")), json },
  ({ json, name }) => onAdmin(Admin.createMerchant(name, { json }))
).pipe(Command.withDescription("open a merchant account; prints its keys once"))

const merchantCommand = group("merchant", "merchant accounts", [merchantCreate])

const terminalBind = Command.make(
  "bind",
  {
    merchant,
    serial,
    model: Options.text("model").pipe(Options.withDescription("SMART or SMART_PRO")),
    name: Options.text("name").pipe(Options.withDescription("a name for people: Caja 1")),
    json
  },
  ({ json, ...input }) => onAdmin(Admin.bindTerminal(input, { json }))
).pipe(Command.withDescription("bind a terminal to a merchant"))

const terminalEnable = Command.make("enable", { merchant, serial, json }, ({ json, ...input }) =>
  onAdmin(Admin.setTerminalApi(input, true, { json }))
).pipe(Command.withDescription("enable a bound terminal for the terminal API"))

const terminalDisable = Command.make("disable", { merchant, serial, json }, ({ json, ...input }) =>
  onAdmin(Admin.setTerminalApi(input, false, { json }))
).pipe(Command.withDescription("disable a terminal for the terminal API"))

const terminal = group("terminal", "a merchant's terminals", [terminalBind, terminalEnable, terminalDisable])

const webhookSet = Command.make(
  "set",
  {
    merchant,
    mode,
    url: Options.text("url").pipe(Options.withDescription("where notifications go")),
    standardWebhooks: Options.boolean("standard-webhooks").pipe(
      Options.withDescription("also send the Standard Webhooks headers (webhook-id, -timestamp, -signature)")
    ),
    json
  },
  ({ json, ...input }) => onAdmin(Admin.setWebhook(input, { json }))
).pipe(Command.withDescription("register the merchant's production or test webhook"))

const webhook = group("webhook", "a merchant's webhooks", [webhookSet])

const keysRotate = Command.make(
  "rotate",
  {
    merchant,
    integration: Options.choice("integration", ["terminal_api", "payment_button"]).pipe(
      Options.withDescription("which integration's keys")
    ),
    mode,
    json
  },
  ({ json, ...input }) => onAdmin(Admin.rotateKey(input, { json }))
).pipe(Command.withDescription("revoke a key pair and issue its replacement; prints it once"))

const keys = group("keys", "a merchant's API keys", [keysRotate])

const userCreate = Command.make(
  "create",
  {
    merchant,
    email: Options.text("email").pipe(
      Options.withDescription("the user's email address (one user per email)")
    ),
    role: Options.choice("role", ["full_access", "read_only"]).pipe(
      Options.withDescription("full_access: everything; read_only: sees everything, changes nothing")
    ),
    json
  },
  ({ json, ...input }) => onAdmin(User.create(input, { json }))
).pipe(
  Command.withDescription(
    `create a user of the merchant panel; the password comes from ${User.PASSWORD_VARIABLE} or standard input, never an argument`
  )
)

const userPassword = Command.make(
  "password",
  {
    email: Options.text("email").pipe(Options.withDescription("the user's email address")),
    json
  },
  ({ json, ...input }) => onAdmin(User.setPassword(input, { json }))
).pipe(
  Command.withDescription(
    `set a panel user's new password and end their sessions; the password comes from ${User.PASSWORD_VARIABLE} or standard input, never an argument`
  )
)

const user = group("user", "the merchant panel's users", [userCreate, userPassword])

/** The whole command tree. */
export const command = group(
  "cobro",
  "Cobro's command line: audit the event log and administer merchants (on DATABASE_URL, else PGlite in DATA_DIR, default ./.data); trigger test notifications and listen for them over the API (COBRO_API_URL, COBRO_API_KEY).",
  [audit, merchantCommand, terminal, webhook, keys, user, Trigger.command, Listen.command]
)

/** Runs the command line on `process.argv`. */
export const run = Command.run(command, { name: "cobro", version: "0.0.0" })
