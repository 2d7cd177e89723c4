/**
 * Path parameters of every route: the router takes them at any length, so an id a create accepts is
 * always read back (find-my-way's default of 100 characters answered 405 on longer ones); and a path
 * or query with a NUL, a control character or bytes that are not UTF-8 is a 400 naming the parameter
 * before any route runs, since no id holds them and PostgreSQL refuses NUL (under `/panel`, the
 * panel's own page of a bad request).
 */
import * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as SafeText from "@cobro/domain/SafeText"
import * as Effect from "effect/Effect"
import * as Errors from "@cobro/api/Errors"
import * as Fallback from "./Fallback.js"

/**
 * The router's configuration: no length limit on a parameter (a request line is bounded by the
 * server's header limit already). Provided with the handlers, so every route of the app has it.
 */
export const routerConfig = HttpRouter.setRouterConfig({ maxParamLength: Number.MAX_SAFE_INTEGER })

/** A route's path split in segments; `:name` segments are parameters. */
export type Template = ReadonlyArray<string>

const split = (path: string): Array<string> => path.split("/").filter((segment) => segment !== "")

/** The path templates of an API's routes, plus extra routes served beside it. */
export const templatesOf = (
  api: HttpApi.HttpApi.Any,
  extra: ReadonlyArray<{ readonly path: string }> = []
): ReadonlyArray<Template> => {
  const templates: Array<Template> = extra.map(({ path }) => split(path))
  HttpApi.reflect(api as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => templates.push(split(endpoint.path))
  })
  return templates
}

const decode = (text: string, plusIsSpace: boolean): string | undefined => {
  try {
    return decodeURIComponent(plusIsSpace ? text.replace(/\+/g, " ") : text)
  } catch {
    return undefined
  }
}

const isClean = (decoded: string | undefined): boolean =>
  decoded !== undefined && SafeText.isSafe(decoded) && !SafeText.hasControl(decoded)

/** The name a segment has in the route the path matches (static segments equal, case aside). */
const nameOf = (templates: ReadonlyArray<Template>, segments: ReadonlyArray<string>, index: number) => {
  for (const template of templates) {
    if (template.length !== segments.length) continue
    const matches = template.every(
      (part, i) => part.startsWith(":") || part.toLowerCase() === segments[i]!.toLowerCase()
    )
    if (matches && template[index]!.startsWith(":")) return template[index]!.slice(1)
  }
  return undefined
}

/** The 400 of a request whose path or query breaks the rule; none when it is clean. */
export const problemOf = (url: string, templates: ReadonlyArray<Template>): Errors.BadRequest | undefined => {
  const query = url.indexOf("?")
  const segments = split(query === -1 ? url : url.slice(0, query))
  for (let i = 0; i < segments.length; i++) {
    if (isClean(decode(segments[i]!, false))) continue
    const name = nameOf(templates, segments, i)
    return Errors.BadRequest.of(
      Errors.Codes.ValidationError,
      `${name ?? "the path"} must be UTF-8 text without NUL or control characters`,
      name
    )
  }
  if (query !== -1) {
    for (const pair of url.slice(query + 1).split("&")) {
      const equals = pair.indexOf("=")
      const key = decode(equals === -1 ? pair : pair.slice(0, equals), true)
      const value = equals === -1 ? "" : decode(pair.slice(equals + 1), true)
      if (isClean(key) && isClean(value)) continue
      return Errors.BadRequest.of(
        Errors.Codes.ValidationError,
        "a query parameter must be UTF-8 text without NUL or control characters",
        isClean(key) ? key : undefined
      )
    }
  }
  return undefined
}

/** Answers a request whose path or query breaks the rule with its 400, before any route runs. */
export const middleware =
  (templates: ReadonlyArray<Template>) =>
  <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const problem = problemOf(request.url, templates)
      return problem === undefined ? app : Effect.succeed(Fallback.badRequest(request, problem))
    })
