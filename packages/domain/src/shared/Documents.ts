/** The identity document a payer may give (spec A3 `payer.document`, C1 `customer`). */
import * as Schema from "effect/Schema"
import * as SafeText from "./SafeText.js"

/**
 * The identity document types a payer may give.
 *
 * @category schemas
 */
export const DocumentType = Schema.Literal(
  "CEDULA",
  "NIT",
  "CEDULA_EXTRANJERIA",
  "PEP",
  "PASAPORTE",
  "NUIP",
  "REGISTRO_CIVIL",
  "DOCUMENTO_EXTRANJERIA",
  "TARJETA_IDENTIDAD",
  "PPT"
)
export type DocumentType = typeof DocumentType.Type

/**
 * A document number: 4 to 15 characters.
 *
 * @category schemas
 */
export const DocumentNumber = SafeText.SafeString.pipe(
  Schema.minLength(4),
  Schema.maxLength(15),
  Schema.annotations({ identifier: "DocumentNumber" })
)
export type DocumentNumber = typeof DocumentNumber.Type
