/**
 * A parser of Server-Sent Events (the WHATWG HTML standard's "event stream interpretation"), for
 * `cobro listen`: text in, events out, across chunk boundaries. Hand-written because the format is
 * small: lines end in CRLF, LF or CR; a blank line dispatches; `:` starts a comment; fields `event`,
 * `data` (joined with LF), `id` (kept for the following events too, ignored with a NUL), `retry`.
 */

/** One dispatched event. */
export interface ServerSentEvent {
  /** `message` unless the event named its type. */
  readonly event: string
  readonly data: string
  /** The last event id set so far (the stream's, not only this event's). */
  readonly id: string | undefined
}

/** Feeds text as it arrives; returns the events it completed. */
export type Parser = (text: string) => ReadonlyArray<ServerSentEvent>

/** A parser with its own buffer and state. */
export const makeParser = (): Parser => {
  let buffer = ""
  let event = ""
  let data: Array<string> = []
  let lastId: string | undefined = undefined
  let hasData = false
  const line = (text: string, out: Array<ServerSentEvent>) => {
    if (text === "") {
      if (hasData) out.push({ event: event === "" ? "message" : event, data: data.join("\n"), id: lastId })
      event = ""
      data = []
      hasData = false
      return
    }
    if (text.startsWith(":")) return
    const colon = text.indexOf(":")
    const field = colon === -1 ? text : text.slice(0, colon)
    let value = colon === -1 ? "" : text.slice(colon + 1)
    if (value.startsWith(" ")) value = value.slice(1)
    switch (field) {
      case "event":
        event = value
        break
      case "data":
        data.push(value)
        hasData = true
        break
      case "id":
        if (!value.includes("\u0000")) lastId = value
        break
      default:
      // `retry` and unknown fields: the listener keeps its own reconnection delays.
    }
  }
  return (text) => {
    buffer += text
    const out: Array<ServerSentEvent> = []
    let start = 0
    for (let i = 0; i < buffer.length; i++) {
      const c = buffer.charCodeAt(i)
      if (c !== 10 && c !== 13) continue
      // A CR at the end of the text may be the first half of a CRLF: wait for more.
      if (c === 13 && i === buffer.length - 1) break
      line(buffer.slice(start, i), out)
      if (c === 13 && buffer.charCodeAt(i + 1) === 10) i++
      start = i + 1
    }
    buffer = buffer.slice(start)
    return out
  }
}
