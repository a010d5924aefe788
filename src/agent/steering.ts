// How messages that arrive during a run reach it (DESIGN §5, steer mode).
import type { UserMessage } from "./messages.ts";

/**
 * The loop's view of the lane's steering queue. `pending` is checked before each tool call
 * that has not started and when the model ends its turn; `take` empties the queue.
 */
export interface SteeringSource {
  pending(): boolean;
  /** Removes and returns every queued message, oldest first; [] when there is none. */
  take(): UserMessage[];
}

export class SteeringQueue implements SteeringSource {
  #queue: UserMessage[] = [];

  push(message: UserMessage): void {
    this.#queue.push(message);
  }

  pending(): boolean {
    return this.#queue.length > 0;
  }

  take(): UserMessage[] {
    const taken = this.#queue;
    this.#queue = [];
    return taken;
  }
}

export const noSteering: SteeringSource = { pending: () => false, take: () => [] };
