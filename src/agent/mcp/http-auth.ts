// What an HTTP MCP connection carries for authorization: Hearth's OAuth provider (no login under
// way: a server that needs one stops the flow with LoginRequiredError), and a fetch that turns a
// `403 insufficient_scope` into StepUpRequiredError with the scopes the server named. The SDK
// would otherwise refresh the same token and fail again; a wider grant needs the owner.
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { McpServerConfig } from "./config.ts";
import { HearthOAuthProvider, StepUpRequiredError } from "./oauth-provider.ts";
import type { McpAuthStore } from "./oauth-store.ts";

export interface HttpAuth {
  authProvider: OAuthClientProvider;
  fetch: typeof fetch;
}

export function httpAuthFor(name: string, config: McpServerConfig, store: McpAuthStore, env: NodeJS.ProcessEnv): HttpAuth {
  const url = config.url!;
  const authProvider = new HearthOAuthProvider({ server: name, url, auth: config.auth, store, env });
  const stepUpFetch: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    if (res.status === 403) {
      const scope = insufficientScope(res.headers.get("www-authenticate"));
      if (scope !== null) {
        await res.body?.cancel();
        throw new StepUpRequiredError(name, scope);
      }
    }
    return res;
  };
  return { authProvider, fetch: stepUpFetch };
}

/** The `scope` of a `Bearer error="insufficient_scope"` challenge ("" when it names none); null for any other. */
export function insufficientScope(header: string | null): string | null {
  if (!header || !/error="?insufficient_scope"?/i.test(header)) return null;
  return /scope="([^"]*)"/i.exec(header)?.[1]?.trim() ?? "";
}
