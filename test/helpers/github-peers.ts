// GitHub as Orka meets it in tests: the git peer and the GitHub REST peer on one set of repositories,
// so a Task's checkout (git) and its GitHub tools (REST) see the same repositories and the same tokens,
// and the environment that points an Orka server at both.
import { startGitPeer, type GitPeer } from "../peers/git-server.ts";
import { startGithubPeer, type GithubPeer } from "../peers/github-server.ts";

export interface GithubPeers {
  git: GitPeer;
  github: GithubPeer;
  /** For the Orka server: its GitHub client calls the REST peer, its git reaches https://github.com/ at the git peer. */
  orkaEnv: { ORKA_GITHUB_API_BASE_URL: string; ORKA_GIT_CONFIG: string };
  stop(): Promise<void>;
}

/** Tokens added to `github` also clone and push through `git`, with the same permission. */
export async function startGithubPeers(): Promise<GithubPeers> {
  const git = await startGitPeer();
  const github = await startGithubPeer({ git });
  return {
    git,
    github,
    orkaEnv: { ORKA_GITHUB_API_BASE_URL: github.baseUrl, ORKA_GIT_CONFIG: git.clientConfigFile },
    async stop() {
      await github.stop();
      await git.close();
    },
  };
}

type Api = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;

/**
 * Secrets a Task's checkout needs (its read and publication Secrets must exist for an attempt to
 * start) and that its model deletes before its tool calls: a tool that then read one would fail with
 * "failed to get … secret" instead of the refusal under test. `api` takes paths under /api/v1.
 */
export function doomedSecrets(api: Api, tokens: Record<string, string>): { create(): Promise<void>; delete(): Promise<void> } {
  const each = async (request: (name: string) => [method: string, path: string, body?: unknown], tolerated: number) => {
    for (const name of Object.keys(tokens)) {
      const [method, path, body] = request(name);
      const answer = await api(method, path, body);
      if (answer.status >= 300 && answer.status !== tolerated) throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
    }
  };
  return {
    // An earlier run that failed before its model deleted them left them in place: 409 is fine.
    create: () => each((name) => ["POST", "/secrets", { name, stringData: { token: tokens[name] } }], 409),
    delete: () => each((name) => ["DELETE", `/secrets/${name}`], 404),
  };
}
