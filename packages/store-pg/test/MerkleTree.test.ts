/**
 * The RFC 9162 Merkle tree (`MerkleTree`): known answers published with Certificate Transparency's
 * reference implementation (the tree of eight leaves), and properties over random logs: every
 * inclusion and consistency proof verifies, and any altered leaf, sibling or size, or any rewrite of
 * history below the older size (alter, remove, reorder, insert, with the chains recomputed as an
 * insider would), makes it fail.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import * as M from "../src/MerkleTree.js"

const hex = (h: Uint8Array) => Buffer.from(h).toString("hex")
const unhex = (s: string) => new Uint8Array(Buffer.from(s, "hex"))

// The leaves and tree heads of CT's reference tests (RFC 6962 hashing, unchanged in RFC 9162).
const CT_LEAVES = [
  "",
  "00",
  "10",
  "2021",
  "3031",
  "40414243",
  "5051525354555657",
  "606162636465666768696a6b6c6d6e6f"
]
  .map(unhex)
  .map(M.leafHash)
const CT_ROOTS = [
  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
  "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
  "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
  "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
  "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
  "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
  "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
  "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
  "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328"
]
const CT_INCLUSION: ReadonlyArray<readonly [number, number, ReadonlyArray<string>]> = [
  [
    0,
    8,
    [
      "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
      "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
      "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"
    ]
  ],
  [
    5,
    8,
    [
      "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
      "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
      "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"
    ]
  ]
]
const CT_CONSISTENCY: ReadonlyArray<readonly [number, number, ReadonlyArray<string>]> = [
  [1, 1, []],
  [
    1,
    8,
    [
      "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
      "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
      "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"
    ]
  ],
  [
    6,
    8,
    [
      "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
      "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
      "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"
    ]
  ],
  [
    2,
    5,
    [
      "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
      "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"
    ]
  ]
]

/** Random leaf hashes: a log of 1 to 70 events. */
const log = FastCheck.array(FastCheck.uint8Array({ minLength: 1, maxLength: 12 }), {
  minLength: 1,
  maxLength: 70
}).map((leaves) => leaves.map(M.leafHash))

/** Leaves enough for any tree the properties build, to read a path's length. */
const dummies = Array.from({ length: 80 }, (_, i) => M.leafHash(Uint8Array.of(i)))

/** A hash with one bit flipped. */
const flip = (h: M.Hash, bit: number) => {
  const out = new Uint8Array(h)
  out[Math.floor(bit / 8) % out.length]! ^= 1 << (bit % 8)
  return out
}

describe("MerkleTree (RFC 9162)", () => {
  describe("known answers", () => {
    it("the tree heads of CT's reference tree, sizes 0 to 8", () => {
      for (let n = 0; n <= 8; n++) expect(hex(M.rootOf(CT_LEAVES.slice(0, n)))).toBe(CT_ROOTS[n])
    })

    it("the inclusion proofs of CT's reference tree, made and verified", () => {
      for (const [index, size, proof] of CT_INCLUSION) {
        expect(M.inclusionProof(CT_LEAVES, index, size).map(hex)).toEqual(proof)
        expect(
          M.verifyInclusion(index, size, CT_LEAVES[index]!, proof.map(unhex), unhex(CT_ROOTS[size]!))
        ).toBe(true)
      }
    })

    it("the consistency proofs of CT's reference tree, made and verified", () => {
      for (const [m, n, proof] of CT_CONSISTENCY) {
        expect(M.consistencyProof(CT_LEAVES, m, n).map(hex)).toEqual(proof)
        expect(M.verifyConsistency(m, n, unhex(CT_ROOTS[m]!), unhex(CT_ROOTS[n]!), proof.map(unhex))).toBe(
          true
        )
      }
    })
  })

  describe("properties", () => {
    it.prop(
      "every leaf's inclusion proof verifies, in at most log2(size) hashes; an altered leaf, sibling, index or size fails",
      [log, FastCheck.nat(), FastCheck.nat()],
      ([leaves, pick, bit]) => {
        const size = 1 + (pick % leaves.length)
        const root = M.rootOf(leaves.slice(0, size))
        for (let index = 0; index < size; index++) {
          const proof = M.inclusionProof(leaves, index, size)
          expect(proof.length).toBeLessThanOrEqual(Math.ceil(Math.log2(size)))
          expect(M.verifyInclusion(index, size, leaves[index]!, proof, root)).toBe(true)
          expect(M.verifyInclusion(index, size, flip(leaves[index]!, bit), proof, root)).toBe(false)
          if (proof.length > 0) {
            const k = bit % proof.length
            const altered = proof.map((p, i) => (i === k ? flip(p, bit) : p))
            expect(M.verifyInclusion(index, size, leaves[index]!, altered, root)).toBe(false)
          }
          if (size > 1) {
            const other = (index + 1 + (bit % (size - 1))) % size
            // Another index: only a leaf equal to this one at that place would verify.
            if (!M.equals(leaves[other]!, leaves[index]!)) {
              expect(M.verifyInclusion(other, size, leaves[index]!, proof, root)).toBe(false)
            }
          }
          // Another size whose path has another length (a checkpoint binds the size to the root, so a
          // size whose path has the same shape is a claim about another tree, not a forgery of this one).
          for (let other = size + 1; other <= size + 8; other++) {
            if (M.inclusionProof(dummies, index, other).length !== proof.length) {
              expect(M.verifyInclusion(index, other, leaves[index]!, proof, root)).toBe(false)
            }
          }
          expect(M.verifyInclusion(index, index, leaves[index]!, proof, root)).toBe(false)
        }
      }
    )

    it.prop(
      "a consistency proof verifies between any two sizes; an altered proof or root fails",
      [log, FastCheck.nat(), FastCheck.nat(), FastCheck.nat()],
      ([leaves, a, b, bit]) => {
        const n = 1 + (a % leaves.length)
        const m = 1 + (b % n)
        const oldRoot = M.rootOf(leaves.slice(0, m))
        const newRoot = M.rootOf(leaves.slice(0, n))
        const proof = M.consistencyProof(leaves, m, n)
        expect(M.verifyConsistency(m, n, oldRoot, newRoot, proof)).toBe(true)
        expect(M.verifyConsistency(m, n, flip(oldRoot, bit), newRoot, proof)).toBe(false)
        expect(M.verifyConsistency(m, n, oldRoot, flip(newRoot, bit), proof)).toBe(false)
        if (proof.length > 0) {
          const k = bit % proof.length
          expect(
            M.verifyConsistency(
              m,
              n,
              oldRoot,
              newRoot,
              proof.map((p, i) => (i === k ? flip(p, bit) : p))
            )
          ).toBe(false)
        }
      }
    )

    it.prop(
      "after any rewrite of history below the older size (alter, remove, reorder, insert), no consistency proof of the rewritten log verifies against the older tree hash",
      [log, FastCheck.nat(), FastCheck.nat(), FastCheck.constantFrom("alter", "remove", "reorder", "insert")],
      ([leaves, a, b, rewrite]) => {
        const m = 1 + (a % leaves.length)
        const oldRoot = M.rootOf(leaves.slice(0, m))
        const at = b % m
        const rewritten = [...leaves]
        if (rewrite === "alter") rewritten[at] = flip(rewritten[at]!, b)
        else if (rewrite === "remove") rewritten.splice(at, 1)
        else if (rewrite === "insert") rewritten.splice(at, 0, M.leafHash(Uint8Array.of(0xff, at)))
        else {
          // Two neighbours swapped (when the older tree holds two different ones there).
          const j = at + 1 < m ? at + 1 : at - 1
          if (j < 0 || M.equals(rewritten[at]!, rewritten[j]!)) return
          ;[rewritten[at], rewritten[j]] = [rewritten[j]!, rewritten[at]!]
        }
        // Equal leaves can make a removal or an insertion change nothing below m: not a rewrite.
        if (rewritten.length >= m && rewritten.slice(0, m).every((leaf, i) => M.equals(leaf, leaves[i]!)))
          return
        // The insider appends more and publishes a new tree over the rewritten log.
        rewritten.push(M.leafHash(Uint8Array.of(0xee)))
        const n = rewritten.length
        if (m > n) return
        const newRoot = M.rootOf(rewritten)
        for (const size of [m, Math.max(1, m - 1)]) {
          if (size > n) continue
          const proof = M.consistencyProof(rewritten, size, n)
          expect(M.verifyConsistency(m, n, oldRoot, newRoot, proof)).toBe(false)
        }
      }
    )

    it.prop(
      "a frontier grown from any stored edge has the reference root, and reports each complete subtree with its reference hash",
      [log, FastCheck.nat()],
      ([leaves, pick]) => {
        const start = pick % (leaves.length + 1)
        const subtreeRoot = (level: number, index: number) =>
          M.rootOf(leaves.slice(index * 2 ** level, (index + 1) * 2 ** level))
        const edge = M.subtrees(0, start).map((p) => subtreeRoot(p.level, p.index))
        const frontier = new M.Frontier(start, edge)
        expect(hex(frontier.root())).toBe(hex(M.rootOf(leaves.slice(0, start))))
        const reported: Array<string> = []
        for (let i = start; i < leaves.length; i++) {
          frontier.push(leaves[i]!, (subtree, hash) => {
            expect(hex(hash)).toBe(hex(subtreeRoot(subtree.level, subtree.index)))
            expect((subtree.index + 1) * 2 ** subtree.level).toBe(i + 1)
            reported.push(`${subtree.level}:${subtree.index}`)
          })
          expect(frontier.size).toBe(i + 1)
          expect(hex(frontier.root())).toBe(hex(M.rootOf(leaves.slice(0, i + 1))))
        }
        // Every complete subtree ending past the start, once.
        expect(new Set(reported).size).toBe(reported.length)
      }
    )

    it.prop(
      "every range a proof carries is made of aligned complete subtrees whose fold is the range's tree hash",
      [log, FastCheck.nat(), FastCheck.nat()],
      ([leaves, a, b]) => {
        const size = 1 + (a % leaves.length)
        const fold = ([from, to]: M.Range) =>
          hex(
            M.foldSubtrees(
              M.subtrees(from, to).map((p) =>
                M.rootOf(leaves.slice(p.index * 2 ** p.level, (p.index + 1) * 2 ** p.level))
              )
            )
          )
        const ranges = [
          [0, size] as M.Range,
          ...M.inclusionRanges(b % size, size),
          ...M.consistencyRanges(1 + (b % size), size)
        ]
        for (const range of ranges) expect(fold(range)).toBe(hex(M.rootOf(leaves.slice(range[0], range[1]))))
      }
    )

    it("a range that does not start on its largest part's boundary is refused", () => {
      expect(() => M.subtrees(1, 3)).toThrow(RangeError)
      expect(M.subtrees(4, 11)).toEqual([
        { level: 2, index: 1 },
        { level: 1, index: 4 },
        { level: 0, index: 10 }
      ])
    })
  })
})
