import { Effect } from "effect"
import * as Net from "node:net"

/** A TCP relay to PostgreSQL that can be cut (every connection reset, new ones refused) and restored on the same port. */
export const relay = (target: URL) =>
  Effect.acquireRelease(
    Effect.async<{ readonly url: string; readonly cut: () => void; readonly restore: Effect.Effect<void> }>((resume) => {
      const sockets = new Set<Net.Socket>()
      let server: Net.Server
      let port = 0
      const listen = (done: () => void) => {
        server = Net.createServer((inbound) => {
          const outbound = Net.connect(Number(target.port || 5432), target.hostname)
          for (const s of [inbound, outbound]) {
            sockets.add(s)
            s.on("error", () => {})
            s.on("close", () => {
              sockets.delete(s)
              inbound.destroy()
              outbound.destroy()
            })
          }
          inbound.pipe(outbound).pipe(inbound)
        })
        server.listen(port, "127.0.0.1", () => {
          port = (server.address() as Net.AddressInfo).port
          done()
        })
      }
      const cut = () => {
        server.close()
        for (const s of sockets) s.resetAndDestroy()
      }
      listen(() => {
        const url = new URL(target.toString())
        url.hostname = "127.0.0.1"
        url.port = String(port)
        resume(Effect.succeed({ url: url.toString(), cut, restore: Effect.async<void>((back) => listen(() => back(Effect.void))) }))
      })
    }),
    ({ cut }) => Effect.sync(cut)
  )

