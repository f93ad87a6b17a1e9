/**
 * What keeps a job from outliving the server that started it, and what
 * lets a later server stop one that did.
 *
 * The watchdog: the job starts under `/bin/sh`, which leaves a small shell
 * in the job's process group reading a pipe whose other end only the
 * server holds, then becomes the job. When the server ends, however it
 * ends (SIGKILL included), the kernel closes its end, the read sees the
 * end of the pipe, and the watchdog sends SIGTERM to the group, then
 * SIGKILL once the job's own process is gone or the grace has passed. When the job has ended and its output is in,
 * the server writes a line to the pipe and the watchdog leaves. It works
 * wherever a POSIX shell does (Linux and macOS alike), with no help from
 * the kernel such as `prctl(PR_SET_PDEATHSIG)`, which Node cannot reach.
 *
 * The start mark: what tells a process from a later one that got its pid
 * (Linux: the boot and the start time in clock ticks; elsewhere, `ps`'s
 * start time). A job's record keeps its mark, and a later server signals
 * the job's group only while its leader still has that mark.
 */
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"

/** The file descriptor the watchdog reads: the job's fourth stdio entry. */
export const FD = 3

/**
 * The argv that runs `argv` as a job watched from its own process group.
 * The watchdog is started twice removed (its parent shell exits at once),
 * so the job never has it as a child to wait for; it ignores SIGTERM, SIGINT
 * and SIGHUP, holds none of the job's pipes, and the job's own descriptor
 * 3 is closed before it starts.
 */
export const argv = (argv: ReadonlyArray<string>, graceMillis: number): [string, ...Array<string>] => {
  const grace = Math.max(1, Math.ceil(graceMillis / 1000))
  const script = [
    `( ( trap '' TERM INT HUP`,
    `if read -r _ <&${FD}; then exit 0; fi`,
    `kill -s TERM -- -$$`,
    // the grace ends early once the job's own process is gone; whatever is left of its group is then killed
    `n=0; while [ $n -lt ${grace} ] && kill -0 $$ 2>/dev/null; do sleep 1; n=$((n + 1)); done`,
    `kill -s KILL -- -$$ ) </dev/null >/dev/null 2>&1 & )`,
    `exec ${FD}<&-`,
    `exec "$@"`
  ].join("\n")
  return ["/bin/sh", "-c", script, "spillway-job", ...argv]
}

/** The line that tells the watchdog the job ended and was seen to end: it leaves without a signal. */
export const STAND_DOWN = "ended\n"

const bootId = (() => {
  let id: string | undefined
  return () => {
    try {
      id ??= Fs.readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim()
    } catch {
      id = ""
    }
    return id
  }
})()

/**
 * The start mark of a live process, or undefined when there is none with
 * that pid (or the platform gives no way to tell).
 */
export const startMark = (pid: number): string | undefined => {
  if (!Number.isSafeInteger(pid) || pid <= 1) return undefined
  if (process.platform === "linux") {
    let stat: string
    try {
      stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    } catch {
      return undefined
    }
    // the name in parentheses may hold spaces and parentheses: the fields follow the last ")"
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    // field 22, starttime, is the 20th after the name
    const ticks = fields[19]
    return ticks !== undefined && /^\d+$/.test(ticks) ? `linux:${bootId()}:${ticks}` : undefined
  }
  try {
    const out = ChildProcess.execFileSync("ps", ["-o", "lstart=", "-p", String(pid)], { encoding: "utf8", timeout: 5_000, stdio: ["ignore", "pipe", "ignore"] })
    const lstart = out.trim()
    return lstart !== "" ? `ps:${lstart}` : undefined
  } catch {
    return undefined
  }
}

const signalGroup = (pid: number, signal: NodeJS.Signals): boolean => {
  try {
    process.kill(-pid, signal)
    return true
  } catch {
    return false
  }
}

/**
 * Stops the process group a job left running when its leader `pid` is
 * still the process `mark` names: SIGTERM to the group, SIGKILL after
 * `graceMillis` if the leader is still there. The signal that ended it, or
 * undefined when there was nothing of the job's to stop (the pid is free,
 * or another process has it now).
 */
export const stopLeftover = async (pid: number, mark: string, graceMillis: number): Promise<NodeJS.Signals | undefined> => {
  if (startMark(pid) !== mark) return undefined
  if (!signalGroup(pid, "SIGTERM")) return undefined
  const until = Date.now() + graceMillis
  while (Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    if (startMark(pid) !== mark) return "SIGTERM"
  }
  // still the same leader (a zombie keeps its mark until reaped: the group is signalled, not the pid)
  signalGroup(pid, "SIGKILL")
  return "SIGKILL"
}
