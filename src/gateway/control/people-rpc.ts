// The control socket's people.* methods: `hearth people` through the running daemon, which
// then answers the next message of a linked account as that person. Parameters are checked
// here for their shape and by the registry for their meaning; errors are the registry's words.
import { z } from "zod";
import { addPerson, changePerson, linkAccounts, ownerAccountsOf, removePerson, unlinkAccounts, type HouseholdDeps } from "../../people/household.ts";
import { personToolsSchema } from "../../people/person.ts";
import type { PeopleRegistry } from "../../people/registry.ts";
import type { Config } from "../../config/schema.ts";

/** What the people methods use of the gateway. */
export interface PeopleRpcDeps {
  config: Config;
  people: PeopleRegistry;
}

const named = z.object({ name: z.string() });
const withAccounts = named.extend({ accounts: z.array(z.string()) });
const addParams = withAccounts.extend({ dailyUsd: z.number().optional(), tools: personToolsSchema.optional() });
const setParams = named.extend({ dailyUsd: z.number().nullable().optional(), tools: personToolsSchema.optional() });
const removeParams = named.extend({ deleteFiles: z.boolean().optional() });

function paramsOf<T>(schema: z.ZodType<T>, method: string, p: Record<string, unknown>): T {
  const r = schema.safeParse(p);
  if (!r.success) throw new Error(`${method}: bad parameters (${z.prettifyError(r.error).replace(/\n\s*/g, " ")}).`);
  return r.data;
}

export function peopleMethods(ctx: PeopleRpcDeps): Record<string, (p: Record<string, unknown>) => unknown> {
  const deps = (): HouseholdDeps => ({ people: ctx.people, workspace: ctx.config.workspace, owners: ownerAccountsOf(ctx.config.channels) });
  return {
    "people.list": () => ctx.people.list(),
    "people.add": (p) => {
      const a = paramsOf(addParams, "people.add", p);
      return addPerson(deps(), { name: a.name, accounts: a.accounts, ...(a.dailyUsd !== undefined ? { dailyUsd: a.dailyUsd } : {}), ...(a.tools ? { tools: a.tools } : {}) });
    },
    "people.link": (p) => {
      const a = paramsOf(withAccounts, "people.link", p);
      return linkAccounts(deps(), a.name, a.accounts);
    },
    "people.unlink": (p) => {
      const a = paramsOf(withAccounts, "people.unlink", p);
      return unlinkAccounts(deps(), a.name, a.accounts);
    },
    "people.set": (p) => {
      const a = paramsOf(setParams, "people.set", p);
      return changePerson(deps(), a.name, { ...(a.dailyUsd !== undefined ? { dailyUsd: a.dailyUsd } : {}), ...(a.tools ? { tools: a.tools } : {}) });
    },
    "people.remove": (p) => {
      const a = paramsOf(removeParams, "people.remove", p);
      return removePerson(deps(), a.name, a.deleteFiles === true);
    },
  };
}
