// What the owner does to the household, the same whether the daemon does it (the control
// socket's people.* methods) or `hearth people` does it on the files directly: the registry and
// the person's space change together. Adding someone from the command line is the owner's
// approval of every account named; linking from a chat with a proof code is not built yet.
import { channelAccess } from "../channels/registry.ts";
import { personSpaceDir } from "../memory/visibility.ts";
import type { Person, PersonTools } from "./person.ts";
import type { NewPerson, OwnerAccounts, PeopleRegistry } from "./registry.ts";
import { createSpace, deleteSpace } from "./spaces.ts";

export interface HouseholdDeps {
  people: PeopleRegistry;
  /** The workspace folder (config `workspace`). */
  workspace: string;
  owners: OwnerAccounts;
}

/** The owner's accounts per channel, from config's `channels.<id>.ownerIds`. */
export const ownerAccountsOf =
  (channels: object): OwnerAccounts =>
  (channel) =>
    channelAccess(channels, channel)?.ownerIds ?? [];

export interface Added {
  person: Person;
  /** The files made for them (workspace-relative); [] when their space was there already. */
  created: string[];
}

/** Adds a person and makes their space; a space that cannot be made undoes the add. Throws PeopleError. */
export function addPerson(deps: HouseholdDeps, input: NewPerson): Added {
  const person = deps.people.add(input, deps.owners);
  try {
    return { person, created: createSpace(deps.workspace, person.name) };
  } catch (err) {
    deps.people.remove(person.name);
    throw err;
  }
}

export interface Removed {
  person: Person;
  /** Their folder, workspace-relative. */
  space: string;
  /** True when `deleteFiles` deleted it. */
  deleted: boolean;
}

/** Removes a person; their folder stays unless `deleteFiles`. Throws PeopleError. */
export function removePerson(deps: HouseholdDeps, name: string, deleteFiles: boolean): Removed {
  const person = deps.people.remove(name);
  const deleted = deleteFiles ? deleteSpace(deps.workspace, person.name) : false;
  return { person, space: personSpaceDir(person.name), deleted };
}

export const linkAccounts = (deps: HouseholdDeps, name: string, accounts: string[]): Person => deps.people.link(name, accounts, deps.owners);

export const unlinkAccounts = (deps: HouseholdDeps, name: string, accounts: string[]): Person => deps.people.unlink(name, accounts);

export const changePerson = (deps: HouseholdDeps, name: string, change: { dailyUsd?: number | null; tools?: PersonTools }): Person => deps.people.set(name, change);
