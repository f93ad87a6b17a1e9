import { Schema } from "effect"

/** A spawn past the concurrency limit. */
export class AdmissionRefused extends Schema.TaggedError<AdmissionRefused>()("AdmissionRefused", {
  limit: Schema.Number,
  running: Schema.Number
}) {
  override get message() {
    return `cannot start another agent: ${this.running} are running and agents.max_concurrent_agents is ${this.limit}; wait for one to finish`
  }
}

/** The agent has no body yet. */
export class AgentRunning extends Schema.TaggedError<AgentRunning>()("AgentRunning", { agentId: Schema.String }) {
  override get message() {
    return `agent ${this.agentId} is still running and has no result yet; call wait_for_agents first`
  }
}

/** A wait whose roster alone would not fit the delivery budget. */
export class BatchTooLarge extends Schema.TaggedError<BatchTooLarge>()("BatchTooLarge", {
  requested: Schema.Number,
  fits: Schema.Number
}) {
  override get message() {
    return this.fits === 0
      ? `not even one agent's row fits the result budget of this runtime; its host must raise budgetChars`
      : `waiting on ${this.requested} agents would not fit one result; split agent_ids into batches of at most ${this.fits}`
  }
}

