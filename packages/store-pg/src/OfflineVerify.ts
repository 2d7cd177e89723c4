/**
 * An export checked against a signed checkpoint with no database (`cobro audit verify --export`):
 * the checkpoint's signature with the log's verifier key, every event's hash and every stream's
 * chain, and the Merkle tree hash of the export's first `size` events against the checkpoint's
 * root. An export is in catch-up order, the tree's order, so one pass does all of it in memory
 * bounded by the number of streams.
 */
import type * as EventStore from "@cobro/domain/EventStore"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import { StringDecoder } from "node:string_decoder"
import * as Checkpoint from "./Checkpoint.js"
import * as Export from "./Export.js"
import * as MerkleTree from "./MerkleTree.js"
import * as Verify from "./Verify.js"

/** What does not hold. */
export type Problem = Data.TaggedEnum<{
  /** The checkpoint is not a signed note of this key (or its origin is not the key's name). */
  BadSignature: {}
  /** A line is not an export line. */
  MalformedLine: { readonly line: number; readonly message: string }
  /** A stream's chain breaks (an altered, removed or reordered event). */
  BrokenChain: { readonly found: Verify.ChainBreak }
  /** The export holds fewer events than the checkpoint's tree. */
  TooShort: { readonly events: number; readonly size: number }
  /** The tree hash of the export's first `size` events is not the checkpoint's root. */
  RootMismatch: { readonly size: number; readonly signed: string; readonly computed: string }
}>
export const Problem = Data.taggedEnum<Problem>()

/** What {@link ExportVerifier.finish} found. */
export interface Report {
  readonly events: number
  readonly streams: number
  /** The checkpoint checked against, once its signature verified. */
  readonly checkpoint: Checkpoint.Checkpoint | undefined
  /** Empty: the export is the log the checkpoint signs (and maybe more), unaltered. */
  readonly problems: ReadonlyArray<Problem>
}

/** Checks an export's events, fed in its order, against one checkpoint. */
export class ExportVerifier {
  private readonly walks = new Map<string, Verify.StreamWalk>()
  private readonly frontier = new MerkleTree.Frontier()
  private readonly problems: Array<Problem> = []
  private events = 0
  private lines = 0
  private root: MerkleTree.Hash | undefined

  constructor(readonly checkpoint: Checkpoint.Checkpoint) {
    if (checkpoint.size === 0) this.root = MerkleTree.emptyRoot
  }

  /** The next event of the export. */
  event(event: EventStore.RecordedEvent): void {
    let walk = this.walks.get(event.streamId)
    if (walk === undefined) {
      walk = new Verify.StreamWalk(event.streamId)
      this.walks.set(event.streamId, walk)
    }
    const found = walk.next(event)
    if (found !== undefined) this.problems.push(Problem.BrokenChain({ found }))
    this.events++
    if (this.frontier.size < this.checkpoint.size) {
      this.frontier.push(MerkleTree.leafHash(Buffer.from(event.hash, "hex")))
      if (this.frontier.size === this.checkpoint.size) this.root = this.frontier.root()
    }
  }

  /** The next line of the export (a blank line is skipped, and counted). */
  line(text: string): void {
    this.lines++
    if (text.trim() === "") return
    let event: EventStore.RecordedEvent
    try {
      event = Export.fromLine(text)
      if (typeof event.hash !== "string" || !/^[0-9a-f]{64}$/.test(event.hash)) throw new Error("no hex hash")
    } catch (cause) {
      this.problems.push(
        Problem.MalformedLine({
          line: this.lines,
          message: cause instanceof Error ? cause.message : String(cause)
        })
      )
      return
    }
    this.event(event)
  }

  /** The report, once every line has been fed. */
  finish(): Report {
    const problems = [...this.problems]
    if (this.root === undefined) {
      problems.push(Problem.TooShort({ events: this.frontier.size, size: this.checkpoint.size }))
    } else if (!MerkleTree.equals(this.root, this.checkpoint.root)) {
      problems.push(
        Problem.RootMismatch({
          size: this.checkpoint.size,
          signed: Buffer.from(this.checkpoint.root).toString("base64"),
          computed: Buffer.from(this.root).toString("base64")
        })
      )
    }
    return { events: this.events, streams: this.walks.size, checkpoint: this.checkpoint, problems }
  }
}

/** The lines of a file, read in large chunks (no per-line stream machinery). */
export async function* linesOf(path: string): AsyncGenerator<string> {
  const decoder = new StringDecoder("utf8")
  let rest = ""
  for await (const chunk of Fs.createReadStream(path, { highWaterMark: 1 << 20 })) {
    const text = rest + decoder.write(chunk as Buffer)
    let start = 0
    let end = text.indexOf("\n", start)
    while (end >= 0) {
      yield text.slice(start, end)
      start = end + 1
      end = text.indexOf("\n", start)
    }
    rest = text.slice(start)
  }
  rest += decoder.end()
  if (rest !== "") yield rest
}

/**
 * Checks export lines against a signed checkpoint and the log's verifier key (as `cobro audit
 * public-key` prints it). A checkpoint that does not verify is the only problem reported: nothing
 * else can be trusted then.
 */
export const verifyLines = async (
  lines: AsyncIterable<string> | Iterable<string>,
  note: string,
  verifierKey: string
): Promise<Report> => {
  const checkpoint = Checkpoint.openWithVerifierKey(note, verifierKey)
  if (checkpoint === undefined) {
    return { events: 0, streams: 0, checkpoint: undefined, problems: [Problem.BadSignature()] }
  }
  const verifier = new ExportVerifier(checkpoint)
  for await (const line of lines) verifier.line(line)
  return verifier.finish()
}

/** {@link verifyLines} over an export file, as an Effect; a file that cannot be read fails. */
export const verifyFile = (path: string, note: string, verifierKey: string): Effect.Effect<Report, Error> =>
  Effect.tryPromise({
    try: () => verifyLines(linesOf(path), note, verifierKey),
    catch: (cause) => (cause instanceof Error ? cause : new Error(String(cause)))
  })

/** The version a chain break names. */
const versionOf = (found: Verify.ChainBreak): number => {
  switch (found._tag) {
    case "MissingEvent":
      return found.expectedVersion
    case "HeadMismatch":
      return found.headVersion
    default:
      return found.streamVersion
  }
}

/** A problem in one sentence. */
export const describe = (problem: Problem): string => {
  switch (problem._tag) {
    case "BadSignature":
      return "the checkpoint is not signed by this public key (or names another log)"
    case "MalformedLine":
      return `line ${problem.line}: not an export line (${problem.message})`
    case "BrokenChain":
      return `${problem.found.streamId} version ${versionOf(problem.found)}: the hash chain breaks (${problem.found._tag})`
    case "TooShort":
      return `the export holds ${problem.events} events, fewer than the checkpoint's ${problem.size} (export the whole log, without --since or --until)`
    case "RootMismatch":
      return `the tree hash of the export's first ${problem.size} events is ${problem.computed}, not the checkpoint's ${problem.signed}: the log was rewritten, or the export is not the whole log`
  }
}
