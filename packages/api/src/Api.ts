/**
 * `CobroApi`: the whole HTTP contract, composed from groups (issue 4, "Endpoints and contract"). A
 * group's endpoints live in `<Name>Endpoints.ts` and are added here with one line each.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as OpenApi from "@effect/platform/OpenApi"
import * as AdminEndpoints from "./AdminEndpoints.js"
import * as AdminListEndpoints from "./AdminListEndpoints.js"
import * as AuditEndpoints from "./AuditEndpoints.js"
import * as Errors from "./Errors.js"
import * as HealthEndpoints from "./HealthEndpoints.js"
import * as LinkEndpoints from "./LinkEndpoints.js"
import * as OnlineEndpoints from "./OnlineEndpoints.js"
import * as OpenApiDocument from "./OpenApiDocument.js"
import * as PanelUserEndpoints from "./PanelUserEndpoints.js"
import * as SandboxEndpoints from "./SandboxEndpoints.js"
import * as TerminalEndpoints from "./TerminalEndpoints.js"

/** The Cobro API. */
export class CobroApi extends HttpApi.make("cobro")
  .add(AdminEndpoints.AdminGroup)
  .add(AdminListEndpoints.AdminListGroup)
  .add(HealthEndpoints.HealthGroup)
  .add(LinkEndpoints.LinkGroup)
  .add(OnlineEndpoints.OnlineGroup)
  .add(OnlineEndpoints.OnlineAdminGroup)
  .add(OnlineEndpoints.ChallengeGroup)
  .add(TerminalEndpoints.TerminalGroup)
  .add(SandboxEndpoints.SandboxGroup)
  .add(AuditEndpoints.AuditGroup)
  .add(AuditEndpoints.AuditAdminGroup)
  .add(PanelUserEndpoints.PanelUserGroup)
  .addError(Errors.InternalServerError)
  .annotateContext(
    OpenApi.annotations({
      title: "Cobro",
      version: "1.0.0",
      description: OpenApiDocument.DESCRIPTION,
      transform: OpenApiDocument.transform
    })
  ) {}
