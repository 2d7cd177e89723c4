/**
 * A Merkle tree over the log, as RFC 9162 (Certificate Transparency 2.0) defines it, section 2.1:
 * the tree hash of a list of leaves, inclusion proofs (2.1.3) and consistency proofs (2.1.4), and
 * the verifier's algorithms for both. Pure and synchronous; the reference the log's stored tree and
 * an offline auditor both check against. A leaf here is already a leaf hash,
 * `SHA-256(0x00 ‖ leaf)` ({@link leafHash}): for the log, the leaf is an event's chain hash.
 */
import { hash } from "node:crypto"

/** A SHA-256 digest: 32 bytes. */
export type Hash = Uint8Array

// One-shot hashing of one buffer: about 40 % cheaper than a hash object updated part by part.
const sha256 = (input: Uint8Array): Hash => hash("sha256", input, "buffer")

/** A leaf's hash: `SHA-256(0x00 ‖ leaf)`. */
export const leafHash = (leaf: Uint8Array): Hash => {
  const input = Buffer.allocUnsafe(1 + leaf.length)
  input[0] = 0x00
  input.set(leaf, 1)
  return sha256(input)
}

/** An interior node's hash: `SHA-256(0x01 ‖ left ‖ right)`. */
export const nodeHash = (left: Hash, right: Hash): Hash => {
  const input = Buffer.allocUnsafe(1 + left.length + right.length)
  input[0] = 0x01
  input.set(left, 1)
  input.set(right, 1 + left.length)
  return sha256(input)
}

/** The hash of the empty tree: SHA-256 of the empty string. */
export const emptyRoot: Hash = sha256(new Uint8Array(0))

/** Whether two hashes are the same bytes. */
export const equals = (a: Hash, b: Hash): boolean =>
  a.length === b.length && a.every((byte, i) => byte === b[i])

/** The largest power of two smaller than `n` (`n` > 1): where RFC 9162 splits a tree of `n` leaves. */
export const split = (n: number): number => {
  let k = 1
  while (k * 2 < n) k *= 2
  return k
}

/** MTH over `leaves[from, to)`, from their leaf hashes. */
const subtreeRoot = (leaves: ReadonlyArray<Hash>, from: number, to: number): Hash => {
  const n = to - from
  if (n === 0) return emptyRoot
  if (n === 1) return leaves[from]!
  const k = split(n)
  return nodeHash(subtreeRoot(leaves, from, from + k), subtreeRoot(leaves, from + k, to))
}

/** The tree hash (MTH) of the leaves, given their leaf hashes in log order. */
export const rootOf = (leaves: ReadonlyArray<Hash>): Hash => subtreeRoot(leaves, 0, leaves.length)

/** A range of leaves `[from, to)` whose tree hash (MTH) a proof carries. */
export type Range = readonly [from: number, to: number]

/** Where a walk down from the root has got (see {@link descend}). */
interface Descent {
  /** The subtree reached, `[from, to)`. */
  readonly from: number
  readonly to: number
  /** The sibling of each subtree passed, from the root down. */
  readonly siblings: Array<Range>
  /** Whether the walk ever went into a right subtree. */
  readonly wentRight: boolean
}

/**
 * The walk down the tree of `size` leaves that both proofs make (RFC 9162 2.1.3.1 and 2.1.4.1): at
 * each subtree, split where RFC 9162 splits it, into the left part when `goesLeft(m, k)` (`k` the
 * left part's size), else into the right one, `m` counted from the subtree's first leaf; until
 * `arrived(m, width)`.
 */
const descend = (
  size: number,
  m: number,
  goesLeft: (m: number, k: number) => boolean,
  arrived: (m: number, width: number) => boolean
): Descent => {
  const siblings: Array<Range> = []
  let [from, to, wentRight] = [0, size, false]
  while (!arrived(m, to - from)) {
    const k = split(to - from)
    if (goesLeft(m, k)) {
      siblings.push([from + k, to])
      to = from + k
    } else {
      siblings.push([from, from + k])
      from += k
      m -= k
      wentRight = true
    }
  }
  return { from, to, siblings, wentRight }
}

/**
 * The ranges whose tree hashes make the inclusion proof (the audit path, PATH(m, D[n])) of leaf
 * `index` in the tree of `size` leaves, from the leaf up.
 */
export const inclusionRanges = (index: number, size: number): Array<Range> => {
  if (!(Number.isSafeInteger(index) && Number.isSafeInteger(size) && index >= 0 && index < size)) {
    throw new RangeError(`no leaf ${index} in a tree of ${size}`)
  }
  // Down to the leaf; the path is written from the leaf up.
  const { siblings } = descend(
    size,
    index,
    (m, k) => m < k,
    (_, width) => width <= 1
  )
  return siblings.reverse()
}

/**
 * The ranges whose tree hashes make the consistency proof (PROOF(m, D[n])) that the tree of the
 * first `m` leaves is a prefix of the tree of `size`, for 0 < m ≤ size.
 */
export const consistencyRanges = (m: number, size: number): Array<Range> => {
  if (!(Number.isSafeInteger(m) && Number.isSafeInteger(size) && m > 0 && m <= size)) {
    throw new RangeError(`no consistency proof from ${m} to ${size}`)
  }
  // Down to the subtree that the first tree's last leaves make whole.
  const { from, siblings, to, wentRight } = descend(
    size,
    m,
    (m, k) => m <= k,
    (m, width) => m === width
  )
  // A subtree of the first tree that is not the whole of it is part of the proof.
  if (wentRight) siblings.push([from, to])
  return siblings.reverse()
}

/** The tree hashes of a proof's ranges over the first `size` leaves. */
const proofOver = (leaves: ReadonlyArray<Hash>, size: number, ranges: ReadonlyArray<Range>): Array<Hash> => {
  if (size > leaves.length) throw new RangeError(`no tree of ${size} in ${leaves.length} leaves`)
  return ranges.map(([from, to]) => subtreeRoot(leaves, from, to))
}

/**
 * The inclusion proof of leaf `index` in the tree of the first `size` leaves (default all): the
 * sibling hashes from the leaf up.
 */
export const inclusionProof = (
  leaves: ReadonlyArray<Hash>,
  index: number,
  size: number = leaves.length
): Array<Hash> => proofOver(leaves, size, inclusionRanges(index, size))

/**
 * The consistency proof that the tree of the first `m` leaves is a prefix of the tree of the first
 * `size` (default all), for 0 < m ≤ size.
 */
export const consistencyProof = (
  leaves: ReadonlyArray<Hash>,
  m: number,
  size: number = leaves.length
): Array<Hash> => proofOver(leaves, size, consistencyRanges(m, size))

/**
 * A complete subtree: the `2^level` leaves from `index · 2^level`. Once complete, its hash never
 * changes, so a stored tree keeps these and computes any other range's hash from them.
 */
export interface Subtree {
  readonly level: number
  readonly index: number
}

/**
 * The complete subtrees a proof's range `[from, to)` is made of, largest (leftmost) first: the
 * binary decomposition of its length. The ranges of {@link inclusionRanges} and
 * {@link consistencyRanges} (and `[0, size)`) start at a multiple of their largest part, so each
 * part is aligned; {@link foldSubtrees} of their hashes is the range's tree hash.
 */
export const subtrees = (from: number, to: number): Array<Subtree> => {
  const parts: Array<Subtree> = []
  let start = from
  let rest = to - from
  while (rest > 0) {
    let width = 1
    let level = 0
    while (width * 2 <= rest) {
      width *= 2
      level++
    }
    if (start % width !== 0) throw new RangeError(`[${from}, ${to}) is not made of aligned subtrees`)
    parts.push({ level, index: start / width })
    start += width
    rest -= width
  }
  return parts
}

/** The tree hash of a range from its {@link subtrees}' hashes, in their order: a fold from the right. */
export const foldSubtrees = (hashes: ReadonlyArray<Hash>): Hash => {
  if (hashes.length === 0) return emptyRoot
  let root = hashes[hashes.length - 1]!
  for (let i = hashes.length - 2; i >= 0; i--) root = nodeHash(hashes[i]!, root)
  return root
}

/**
 * The right edge of a growing tree: the complete subtrees of its size's binary decomposition,
 * largest first. Each leaf pushed completes zero or more subtrees, reported to `onSubtree` (what a
 * stored tree inserts); {@link root} is the tree hash of every leaf so far. An offline verifier
 * streams an export's leaves through one in constant memory.
 */
export class Frontier {
  private readonly levels: Array<number> = []
  private readonly hashes: Array<Hash> = []
  private count: number

  /** A tree of `size` leaves whose {@link subtrees}`(0, size)` have these hashes (none: empty). */
  constructor(size = 0, edge: ReadonlyArray<Hash> = []) {
    const parts = subtrees(0, size)
    if (parts.length !== edge.length)
      throw new RangeError(`a tree of ${size} has ${parts.length} edge subtrees`)
    parts.forEach((part, i) => {
      this.levels.push(part.level)
      this.hashes.push(edge[i]!)
    })
    this.count = size
  }

  /** The number of leaves. */
  get size(): number {
    return this.count
  }

  /** Adds a leaf, given its leaf hash. */
  push(leaf: Hash, onSubtree?: (subtree: Subtree, hash: Hash) => void): void {
    let level = 0
    let hash = leaf
    let index = this.count
    onSubtree?.({ level, index }, hash)
    while (this.levels.length > 0 && this.levels[this.levels.length - 1] === level) {
      this.levels.pop()
      hash = nodeHash(this.hashes.pop()!, hash)
      level++
      index = Math.floor(index / 2)
      onSubtree?.({ level, index }, hash)
    }
    this.levels.push(level)
    this.hashes.push(hash)
    this.count++
  }

  /** The tree hash of every leaf pushed. */
  root(): Hash {
    return foldSubtrees(this.hashes)
  }
}

const lsb = (n: number) => n % 2 === 1

// Arithmetic, not bitwise: tree sizes go past 2³¹.
const half = (n: number) => Math.floor(n / 2)

/**
 * The walk both verifiers make up a path (RFC 9162 2.1.3.2 step 4, 2.1.4.2 step 6), from node `fn`
 * of a tree whose last node is `sn`: each hash is a left sibling or a right one. False when the path
 * does not fit the tree (too long, or too short to reach its root).
 */
const walk = (
  fn: number,
  sn: number,
  path: ReadonlyArray<Hash>,
  visit: (hash: Hash, left: boolean) => void
): boolean => {
  for (const hash of path) {
    if (sn === 0) return false
    if (lsb(fn) || fn === sn) {
      visit(hash, true)
      while (!lsb(fn) && fn !== 0) {
        fn = half(fn)
        sn = half(sn)
      }
    } else visit(hash, false)
    fn = half(fn)
    sn = half(sn)
  }
  return sn === 0
}
const isPowerOfTwo = (n: number) => {
  let k = 1
  while (k < n) k *= 2
  return k === n
}

/**
 * RFC 9162 2.1.3.2: whether `proof` proves the leaf hash `leaf` at `index` in the tree of `size`
 * leaves whose hash is `root`.
 */
export const verifyInclusion = (
  index: number,
  size: number,
  leaf: Hash,
  proof: ReadonlyArray<Hash>,
  root: Hash
): boolean => {
  if (!(Number.isSafeInteger(index) && Number.isSafeInteger(size) && index >= 0 && index < size)) return false
  let r = leaf
  const fits = walk(index, size - 1, proof, (p, left) => {
    r = left ? nodeHash(p, r) : nodeHash(r, p)
  })
  return fits && equals(r, root)
}

/**
 * RFC 9162 2.1.4.2: whether `proof` proves that the tree of `first` leaves with hash `firstRoot` is
 * a prefix of the tree of `second` leaves with hash `secondRoot`. Equal sizes need an empty proof and
 * equal hashes.
 */
export const verifyConsistency = (
  first: number,
  second: number,
  firstRoot: Hash,
  secondRoot: Hash,
  proof: ReadonlyArray<Hash>
): boolean => {
  if (!(Number.isSafeInteger(first) && Number.isSafeInteger(second) && first > 0 && first <= second))
    return false
  if (first === second) return proof.length === 0 && equals(firstRoot, secondRoot)
  if (proof.length === 0) return false
  // A first tree that is a complete subtree is its own first node of the path.
  const path = isPowerOfTwo(first) ? [firstRoot, ...proof] : [...proof]
  let fn = first - 1
  let sn = second - 1
  while (lsb(fn)) {
    fn = half(fn)
    sn = half(sn)
  }
  let fr = path[0]!
  let sr = path[0]!
  const fits = walk(fn, sn, path.slice(1), (c, left) => {
    if (left) {
      fr = nodeHash(c, fr)
      sr = nodeHash(c, sr)
    } else sr = nodeHash(sr, c)
  })
  return fits && equals(fr, firstRoot) && equals(sr, secondRoot)
}
