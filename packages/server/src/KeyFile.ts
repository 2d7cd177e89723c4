/**
 * The server's 32-byte keys as configuration text or as a file in `DATA_DIR`: the sealing key and
 * the checkpoint key are both read this way, and on PGlite created once if missing.
 */
import * as Option from "effect/Option"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"

/** Reads 32 bytes written as 64 hex digits or as base64 (standard or URL-safe); anything else is refused. */
export const parse = (text: string): Option.Option<Buffer> => {
  const trimmed = text.trim()
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Option.some(Buffer.from(trimmed, "hex"))
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)) {
    const bytes = Buffer.from(trimmed.replace(/-/g, "+").replace(/_/g, "/"), "base64")
    if (bytes.length === 32) return Option.some(bytes)
  }
  return Option.none()
}

/** How to make a 32-byte key for an environment variable. */
export const generateHint = "generate one with `openssl rand -hex 32`"

/** A key read from its file, whether this call created the file, and where it is. */
export interface Loaded {
  readonly key: Buffer
  readonly created: boolean
  readonly path: string
}

/**
 * Reads the key file `fileName` in `dataDir`, creating it first (mode 0600, 32 random bytes in
 * hex) when `create` and it does not exist. Throws with a readable message.
 */
export const load = (dataDir: string, fileName: string, options: { readonly create: boolean }): Loaded => {
  const path = Path.resolve(dataDir, fileName)
  let created = false
  if (options.create) {
    Fs.mkdirSync(dataDir, { recursive: true })
    try {
      // `wx`: never overwrite a key that something already depends on.
      Fs.writeFileSync(path, randomBytes(32).toString("hex") + "\n", { mode: 0o600, flag: "wx" })
      created = true
    } catch (cause) {
      if ((cause as NodeJS.ErrnoException).code !== "EEXIST") throw cause
    }
  }
  const key = parse(Fs.readFileSync(path, "utf8"))
  if (Option.isNone(key)) throw new Error(`${path} does not hold a 32-byte key (64 hex digits)`)
  return { key: key.value, created, path }
}

/** An error's message, for a sentence. */
export const reason = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))
