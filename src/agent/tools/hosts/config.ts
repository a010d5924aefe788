// `tools.exec.hosts`: the owner's other machines that `exec` may run commands on, over SSH.
import { z } from "zod";

const hostName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/, "a host name is letters, digits, '.', '_' or '-'");
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name");

export const sshHostSchema = z.strictObject({
  type: z.literal("ssh"),
  /** Address or DNS name of the server. */
  host: z.string().trim().min(1),
  port: z.number().int().min(1).max(65535).default(22),
  user: z.string().trim().min(1),
  /** Private key file (`~` allowed); absent: the SSH agent at SSH_AUTH_SOCK. Passwords are never used. */
  identityFile: z.string().trim().min(1).optional(),
  /** Where this host's key is checked and `hearth hosts trust` records it; default `<home>/known_hosts`. */
  knownHostsFile: z.string().trim().min(1).optional(),
  /** Folder the commands run in; default the login folder. */
  cwd: z.string().trim().min(1).optional(),
  /** Variables set for every command on this host. */
  env: z.record(envName, z.string()).default({}),
});

export const execHostsSchema = z.record(hostName, sshHostSchema).default({});

export type SshHostConfig = z.output<typeof sshHostSchema>;
export type ExecHostsConfig = z.output<typeof execHostsSchema>;
