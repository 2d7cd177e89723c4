// The merchant's endpoint of `npm run bench -- webhooks`, in its own process (as a merchant's server
// would be): a `node:https` server on 127.0.0.1 (certificate and key in BENCH_TLS_CERT and
// BENCH_TLS_KEY, PEM: production webhooks are https) that reads each body, answers 200 at once, and counts
// the requests that carry the signature header. Driven by IPC from WebhookBench.ts:
//   → {port}                     once listening
//   ← {waitFor: n}  → {reached: n}   when the count reaches n
//   ← {count: true} → {count: n}
//   ← {record: true}                 from now on, note when each notification's 200 is sent
//   ← {arrivals: true} → {arrivals: [[subject, epoch ms], …]}   what was noted; noting stops
import * as Https from "node:https"
import { performance } from "node:perf_hooks"

let count = 0
let unsigned = 0
const waiters = []
let arrivals
const subjectPattern = /"subject":"([^"]+)"/

const tls = { cert: process.env.BENCH_TLS_CERT, key: process.env.BENCH_TLS_KEY }
const server = Https.createServer(tls, (req, res) => {
  const chunks = arrivals === undefined ? undefined : []
  req.on("data", (chunk) => chunks?.push(chunk))
  req.on("end", () => {
    if (typeof req.headers["x-service-signature"] === "string") count++
    else unsigned++
    res.writeHead(200, { "content-type": "text/plain", "content-length": "2" })
    res.end("ok")
    if (chunks !== undefined && arrivals !== undefined) {
      const subject = subjectPattern.exec(Buffer.concat(chunks).toString("utf8"))?.[1]
      if (subject !== undefined) arrivals.push([subject, performance.timeOrigin + performance.now()])
    }
    for (let i = waiters.length - 1; i >= 0; i--) {
      if (count >= waiters[i]) {
        process.send({ reached: waiters[i] })
        waiters.splice(i, 1)
      }
    }
  })
})
server.keepAliveTimeout = 60_000

process.on("message", (message) => {
  if (message.waitFor !== undefined) {
    if (count >= message.waitFor) process.send({ reached: message.waitFor })
    else waiters.push(message.waitFor)
  } else if (message.count) {
    process.send({ count, unsigned })
  } else if (message.record) {
    arrivals = []
  } else if (message.arrivals) {
    process.send({ arrivals: arrivals ?? [] })
    arrivals = undefined
  }
})
process.on("disconnect", () => process.exit(0))

server.listen(0, "127.0.0.1", () => process.send({ port: server.address().port }))
