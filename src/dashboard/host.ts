// What the dashboard needs from the gateway, in one interface: the owner's powers, no more. Each
// method goes through the same code as the chat and the CLI (the terminal channel for chat, the
// workspace opener for notes, the cron service for jobs, the pairing store for people, the
// approvals service for questions and grants, the task service for tasks). The
// daemon builds it from the gateway context (gateway/hosts/dashboard-host.ts); tests may fake it.
import type { AuditRecord } from "../approvals/audit.ts";
import type { Grant } from "../approvals/grants.ts";
import type { OpenQuestion } from "../approvals/service.ts";
import type { ChannelStatus } from "../channels/channel.ts";
import type { CliEvent } from "../channels/terminal/channel.ts";
import type { NoteEntry, NoteRead, NoteSave } from "../memory/workspace-edit.ts";
import type { JobInput } from "../scheduler/job-input.ts";
import type { RecentRun } from "../scheduler/run-log.ts";
import type { JobView } from "../scheduler/view.ts";
import type { BudgetStatus } from "../spending/budget.ts";
import type { UsageRecord } from "../spending/usage-record.ts";
import type { TaskView } from "../tasks/view.ts";

/** The daemon at a glance (a subset of `hearth status`). */
export interface DashboardStatus {
  pid: number;
  startedAt: number;
  model: string;
  channels: Array<{ id: string } & ChannelStatus>;
  /** `waitingFor`: the call its run waits on the owner's approval for. */
  sessions: Array<{ key: string; scope: "main" | "shared"; title?: string; lastActivityAt: number; contextPercent: number; running: boolean; runningForMs: number | null; queued: number; waitingFor?: string }>;
  budget: BudgetStatus;
  damaged: string[];
  terminalMailbox: number;
}

/** One line of the main conversation as the Chat page shows it. */
export interface ChatLine {
  role: "user" | "assistant";
  text: string;
  at: number;
}

export interface PendingCode {
  code: string;
  channel: string;
  userId: string;
  name: string;
  createdAt: number;
}

export interface PairedPerson {
  channel: string;
  userId: string;
  name: string;
  approvedAt: number;
}

/** One recorded version of a workspace file (the memory history), with the change it made. */
export interface NoteVersion {
  /** The history's commit id (`hearth memory diff` takes its first 7 characters). */
  oid: string;
  at: number;
  /** "owner: edit USER.md", "hearth: memory_write MEMORY.md". */
  subject: string;
  /** The change to this file as a unified diff. */
  diff: string;
}

/** A channel's access rules from config: who else may talk, and its rate limit. */
export interface AccessRules {
  channel: string;
  dmPolicy: string;
  allowFrom: string[];
  groups: string[];
  groupPolicy: string;
  dmRateLimit: string;
}

export interface HeartbeatState {
  every: string;
  activeHours: string;
  /** The newest heartbeat log lines' events ("heartbeat.ran", "heartbeat.skipped"…), newest first. */
  lastTicks: Array<{ at: string; event: string; detail: string }>;
}

export interface DashboardHost {
  status(): DashboardStatus;
  /**
   * A lookup of the names Hearth knows (gateway/hosts/chat-names.ts): a session key
   * (`dm:telegram:3003`, `group:telegram:-2001`) or a chat (`telegram:-2001`) → "Sam", "Family";
   * null when none is known. Made once per page: it reads the stores as they are now.
   */
  names(): (ref: string) => string | null;
  /** The last `limit` user and assistant lines of the main session, oldest first. */
  mainHistory(limit: number): ChatLine[];
  chat: {
    /** A web chat client connected; `write` gets its reply events and must not throw. */
    attach(write: (e: CliEvent) => void): string;
    detach(client: string): void;
    /** The owner's message, as the terminal sends it (main session); returns the request id of its events. */
    send(client: string, text: string, files: readonly string[]): string;
    /**
     * Proactive messages to the terminal channel (a background task's result, a job's answer)
     * while the Chat page is open; `onNotice` must not throw. Returns a function that stops it.
     */
    watch(onNotice: (text: string) => void): () => void;
    /** Stops main's active run (the Stop button, /stop). */
    stop(): void;
    /** Where an uploaded attachment is put before it is sent (a folder of the home, owner only). */
    uploadDir(): string;
  };
  notes: {
    list(): NoteEntry[];
    read(relPath: string): NoteRead;
    save(relPath: string, text: string, version: string): NoteSave;
    /** memory_search in the main scope; the tool's text answer. */
    search(query: string): Promise<string>;
    /** The file's newest recorded versions, newest first (at most `limit`); [] without a history. Never rejects. */
    history(relPath: string, limit: number): Promise<NoteVersion[]>;
  };
  /** The approvals, through the same service as the chat buttons and `hearth grants`. */
  approvals: {
    /** Questions waiting for the owner now, oldest first. */
    open(): OpenQuestion[];
    /** Answers question `key` as the owner pressing that button in a chat; the presser's answer ("Allowed."). */
    press(key: string, choice: "once" | "deny"): Promise<string>;
    /** The grants in force, numbered from 1 in this order as `hearth grants` numbers them. */
    grants(): Grant[];
    /** Revokes the grant made at `at` for `pattern`; null when it is no longer in force. */
    revoke(at: number, pattern: string): Grant | null;
    /** The newest `limit` decisions, oldest first. */
    audit(limit: number): AuditRecord[];
  };
  /** Background tasks, through the task service (`/tasks`, `hearth tasks`). */
  tasks: {
    /** Running and waiting tasks, then recent ended ones. */
    list(): TaskView[];
    /** Cancels task `id`; throws a message for the user for an unknown or ended one. */
    cancel(id: string): TaskView;
  };
  cron: {
    list(): JobView[];
    add(input: JobInput): JobView;
    update(id: string, input: JobInput): JobView;
    remove(id: string): JobView;
    runNow(id: string): { runId: string };
    setEnabled(id: string, enabled: boolean): JobView;
    recentRuns(limit: number): RecentRun[];
    heartbeat(): HeartbeatState;
  };
  usage: {
    /** usage.jsonl's records since `sinceMs`. */
    records(sinceMs: number): UsageRecord[];
    budget(): BudgetStatus;
    timezone: string;
  };
  people: {
    pending(): PendingCode[];
    paired(): PairedPerson[];
    approve(code: string): PairedPerson | null;
    deny(code: string): PendingCode | null;
    revoke(channel: string, userId: string): boolean;
    rules(): AccessRules[];
  };
  logs: {
    /** The newest JSON log lines, oldest first. */
    lines(): string[];
    subscribe(listener: (line: string) => void): () => void;
  };
  clock(): number;
}
