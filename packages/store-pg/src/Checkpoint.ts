/**
 * Signed checkpoints of the log's Merkle tree (`MerkleTree`), in the formats the transparency-log
 * ecosystem reads: the body is a C2SP `tlog-checkpoint` (origin line, tree size in decimal, the
 * root hash in base64, each ending in a newline), signed as a C2SP `signed-note` with Ed25519 (a
 * blank line, then `— <key name> <base64(key id ‖ signature)>`). The key id is the first four bytes of
 * `SHA-256(key name ‖ 0x0A ‖ 0x01 ‖ public key)`, and a verifier key is written
 * `<key name>+<hex key id>+<base64(0x01 ‖ public key)>`, as Go's `golang.org/x/mod/sumdb/note`
 * writes them, so that an auditor's tools check Cobro's checkpoints as they check any log's.
 */
import {
  type KeyObject,
  createHash,
  createPrivateKey,
  createPublicKey,
  sign as edSign,
  verify as edVerify
} from "node:crypto"

/** A tree head: the log's origin (its name), how many leaves, and their tree hash. */
export interface Checkpoint {
  readonly origin: string
  readonly size: number
  readonly root: Uint8Array
}

/** The Ed25519 signature type of signed notes. */
const ED25519 = 0x01

// DER prefixes of a raw Ed25519 key as PKCS #8 (private seed) and SubjectPublicKeyInfo.
const PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex")
const SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex")

const privateKeyOf = (seed: Uint8Array) =>
  createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: "der", type: "pkcs8" })
const publicKeyObject = (publicKey: Uint8Array) =>
  createPublicKey({ key: Buffer.concat([SPKI_PREFIX, publicKey]), format: "der", type: "spki" })

/** The 32-byte Ed25519 public key of a 32-byte seed. */
export const publicKeyOf = (seed: Uint8Array): Uint8Array => {
  const der = createPublicKey(privateKeyOf(seed)).export({ format: "der", type: "spki" })
  return new Uint8Array(der.subarray(der.length - 32))
}

/** A key name: non-empty, no Unicode space and no plus sign (signed-note). */
const validName = (name: string) => name.length > 0 && !/[\s+]/u.test(name)

/** The 4-byte id of a key: `SHA-256(name ‖ 0x0A ‖ 0x01 ‖ public key)[:4]`. */
export const keyId = (name: string, publicKey: Uint8Array): Uint8Array =>
  new Uint8Array(
    createHash("sha256")
      .update(Buffer.from(`${name}\n`, "utf8"))
      .update(Uint8Array.of(ED25519))
      .update(publicKey)
      .digest()
      .subarray(0, 4)
  )

/** The verifier key an auditor keeps: `<name>+<hex key id>+<base64(0x01 ‖ public key)>`. */
export const verifierKey = (name: string, publicKey: Uint8Array): string =>
  `${name}+${Buffer.from(keyId(name, publicKey)).toString("hex")}+${Buffer.concat([Uint8Array.of(ED25519), publicKey]).toString("base64")}`

/** Reads a verifier key; `undefined` unless well formed, Ed25519, and its key id matches. */
export const parseVerifierKey = (
  text: string
): { readonly name: string; readonly publicKey: Uint8Array } | undefined => {
  const parts = /^([^+\s]+)\+([0-9a-f]{8})\+([A-Za-z0-9+/]+={0,2})$/.exec(text.trim())
  if (parts === null) return undefined
  const [, name, id, material] = parts as unknown as [string, string, string, string]
  const bytes = Buffer.from(material, "base64")
  if (bytes.length !== 33 || bytes[0] !== ED25519 || bytes.toString("base64") !== material) return undefined
  const publicKey = new Uint8Array(bytes.subarray(1))
  return Buffer.from(keyId(name, publicKey)).toString("hex") === id ? { name, publicKey } : undefined
}

const DASH = "\u2014 "

/** Signs with a private key object and its key id (building the key from a seed costs ~0.7 ms). */
const signText = (text: string, name: string, privateKey: KeyObject, id: Uint8Array): string => {
  if (!validName(name)) throw new RangeError(`not a key name: ${JSON.stringify(name)}`)
  if (!text.endsWith("\n") || text.includes("\n\n") || /[\u0000-\u0009\u000b-\u001f]/.test(text)) {
    throw new RangeError("a note's text ends in a newline and holds no blank line or control character")
  }
  const signature = edSign(null, Buffer.from(text, "utf8"), privateKey)
  const blob = Buffer.concat([id, signature]).toString("base64")
  return `${text}\n${DASH}${name} ${blob}\n`
}

/** Signs a note's text (ending in a newline) with the key `name`: the signed note. */
export const signNote = (text: string, name: string, seed: Uint8Array): string =>
  signText(text, name, privateKeyOf(seed), keyId(name, publicKeyOf(seed)))

/**
 * The text of a signed note if a signature line of the key (`name`, `publicKey`) verifies it; else
 * `undefined`. Lines of other keys are ignored; the first line of this key decides.
 */
export const openNote = (note: string, name: string, publicKey: Uint8Array): string | undefined => {
  const split = note.lastIndexOf("\n\n")
  if (split < 0 || !note.endsWith("\n")) return undefined
  const text = note.slice(0, split + 1)
  const id = Buffer.from(keyId(name, publicKey))
  for (const line of note.slice(split + 2, -1).split("\n")) {
    if (!line.startsWith(DASH)) return undefined
    const [lineName, blob, extra] = line.slice(DASH.length).split(" ")
    if (lineName === undefined || blob === undefined || extra !== undefined) return undefined
    if (lineName !== name) continue
    const bytes = Buffer.from(blob, "base64")
    if (bytes.length !== 4 + 64 || !bytes.subarray(0, 4).equals(id)) continue
    return edVerify(null, Buffer.from(text, "utf8"), publicKeyObject(publicKey), bytes.subarray(4))
      ? text
      : undefined
  }
  return undefined
}

/** The checkpoint's text: origin, size, base64 root, each ending in a newline. */
export const formatCheckpoint = (checkpoint: Checkpoint): string =>
  `${checkpoint.origin}\n${checkpoint.size}\n${Buffer.from(checkpoint.root).toString("base64")}\n`

/** Reads a checkpoint's text (extension lines after the root are allowed and ignored). */
export const parseCheckpoint = (text: string): Checkpoint | undefined => {
  const lines = text.split("\n")
  if (lines.length < 4 || lines.at(-1) !== "") return undefined
  const [origin, size, root] = lines as [string, string, string]
  if (origin === "" || !/^(0|[1-9][0-9]*)$/.test(size) || !Number.isSafeInteger(Number(size)))
    return undefined
  const rootBytes = Buffer.from(root, "base64")
  if (rootBytes.length !== 32 || rootBytes.toString("base64") !== root) return undefined
  return { origin, size: Number(size), root: new Uint8Array(rootBytes) }
}

/** A checkpoint signed with the key `name`: the C2SP signed note. */
export const signCheckpoint = (checkpoint: Checkpoint, name: string, seed: Uint8Array): string =>
  signNote(formatCheckpoint(checkpoint), name, seed)

/** The checkpoint of a signed note, if the key verifies it; else `undefined`. */
export const openCheckpoint = (note: string, name: string, publicKey: Uint8Array): Checkpoint | undefined => {
  const text = openNote(note, name, publicKey)
  return text === undefined ? undefined : parseCheckpoint(text)
}

/** What signs a log's checkpoints: its origin (also the key's name), the Ed25519 seed, its public key. */
export interface Signer {
  readonly origin: string
  readonly seed: Uint8Array
  readonly publicKey: Uint8Array
  /** The seed as a key object and the key's id, made once. */
  readonly privateKey: KeyObject
  readonly keyId: Uint8Array
}

/**
 * The origin of a log whose operator named none: `cobro/` and the first 16 hex digits of the
 * SHA-256 of its public key, stable for as long as the key is.
 */
export const defaultOrigin = (publicKey: Uint8Array): string =>
  `cobro/${createHash("sha256").update(publicKey).digest("hex").slice(0, 16)}`

/** A signer from a 32-byte seed, named `origin` (default {@link defaultOrigin}). */
export const signer = (seed: Uint8Array, origin?: string): Signer => {
  if (seed.length !== 32) throw new RangeError("an Ed25519 seed is 32 bytes")
  const publicKey = publicKeyOf(seed)
  const name = origin ?? defaultOrigin(publicKey)
  if (!validName(name)) throw new RangeError(`not a log origin: ${JSON.stringify(name)} (no spaces, no '+')`)
  return { origin: name, seed, publicKey, privateKey: privateKeyOf(seed), keyId: keyId(name, publicKey) }
}

/** A checkpoint signed by a signer, named by its origin: the C2SP signed note. */
export const signWith = (signer: Signer, checkpoint: Checkpoint): string =>
  signText(formatCheckpoint(checkpoint), signer.origin, signer.privateKey, signer.keyId)

/** A signer's verifier key, as `cobro audit public-key` prints it and `--public-key` reads it. */
export const verifierKeyOf = (signer: Signer): string => verifierKey(signer.origin, signer.publicKey)

/**
 * Opens a signed checkpoint with a verifier key: its checkpoint if the key's signature verifies and
 * the origin line is the key's name; else `undefined`.
 */
export const openWithVerifierKey = (note: string, key: string): Checkpoint | undefined => {
  const parsed = parseVerifierKey(key)
  if (parsed === undefined) return undefined
  const checkpoint = openCheckpoint(note, parsed.name, parsed.publicKey)
  return checkpoint?.origin === parsed.name ? checkpoint : undefined
}
