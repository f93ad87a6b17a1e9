// The least a Node program can do to capture a command's output: start it,
// read every byte of its stdout pipe and write it to a file, with no masking,
// no index and no Effect. `pnpm bench` measures it against `cat F > out` as
// the floor under the capture rows.
//
//   node bench/pipe-copy.cjs FILE OUT   (runs `cat FILE`, its output into OUT)
const { spawn } = require("node:child_process")
const Fs = require("node:fs")

const fd = Fs.openSync(process.argv[3], "w")
const child = spawn("cat", [process.argv[2]], { stdio: ["ignore", "pipe", "inherit"] })
// written at once, on this thread: faster here than a write stream (fewer hops through the thread pool)
child.stdout.on("data", (chunk) => {
  let at = 0
  while (at < chunk.length) at += Fs.writeSync(fd, chunk, at)
})
child.on("close", (code) => {
  Fs.closeSync(fd)
  process.exitCode = code ?? 1
})
