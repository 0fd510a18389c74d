import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FLOW_REPO, FLOW_REPO_URL, startGithubFlow, type GithubFlow } from "../helpers/github-flow.ts";
import { toolResultsOf, type PeerTurn } from "../peers/llm-server.ts";
import { reviewMarker } from "../../src/github/review-marker.ts";

const MARKER_KEY = "monitor-marker-key-0123456789";
/** Every second (croner's six-field form): the second run follows the first without a minute's wait. */
const EVERY_SECOND = "* * * * * *";

type Call = NonNullable<PeerTurn["toolCalls"]>[number];

/** What a run's model was given so far, by step of the monitor's prompt (one pull request per call). */
function progress(body: Record<string, unknown>) {
  const results = toolResultsOf(body).map((text) => (text.startsWith("{") ? JSON.parse(text) : text));
  const pulls: any[] = (results[0]?.pull_requests ?? []).filter((pull: any) => !pull.draft);
  const markers: any[] = results.slice(1, 1 + pulls.length);
  const unreviewed = markers.filter((marker) => marker.found === false);
  const ci: any[] = results.slice(1 + pulls.length, 1 + pulls.length + unreviewed.length);
  const green = unreviewed.filter((_, i) => ci[i]?.status === "passed");
  return { results, pulls, markers, unreviewed, green };
}

/**
 * A model that follows the monitor's prompt, deciding each turn from the tool results it was given:
 * list, check each head's marker, check CI of the unreviewed ones, review the green ones, post one
 * review carrying the marker the tool returned. Each finished run's tool results are kept in `runs`.
 */
function monitorModel(runs: any[][], repoUrl: string): ((body: Record<string, unknown>) => PeerTurn)[] {
  const each = (pulls: any[], call: (pull: any) => Call): PeerTurn => ({ toolCalls: pulls.map(call) });
  const finish = (body: Record<string, unknown>, text: string): PeerTurn => {
    runs.push(progress(body).results);
    return { text };
  };
  return [
    () => ({ toolCalls: [{ name: "list_pull_requests", arguments: { repo_url: repoUrl, per_page: 30 } }] }),
    (body) => each(progress(body).pulls, (pull) => ({ name: "check_pr_review_marker", arguments: { repo_url: repoUrl, pr_number: pull.number } })),
    (body) => {
      const { unreviewed } = progress(body);
      if (unreviewed.length === 0) return finish(body, "Every open pull request's head was reviewed already: nothing to do.");
      return each(unreviewed, (marker) => ({ name: "check_pull_request_ci", arguments: { repo_url: repoUrl, pr_number: marker.pr_number } }));
    },
    (body) => {
      const { green } = progress(body);
      if (green.length === 0) return finish(body, "No pull request with green CI to review.");
      return each(green, (marker) => ({ name: "review_pull_request", arguments: { repo_url: repoUrl, pr_number: marker.pr_number } }));
    },
    (body) => each(progress(body).green, (marker) => ({
      name: "post_review_comment",
      arguments: { repo_url: repoUrl, pr_number: marker.pr_number, event: "COMMENT", body: `Looks correct and tested.\n\n${marker.marker}` },
    })),
    (body) => finish(body, "Reviewed the green pull requests."),
  ];
}

// A PR monitor end to end: a coordinator's model creates it with create_pr_monitor, and its scheduled
// runs, in a real worker with a real checkout, review an unmarked pull request once and skip it after.
describe("a PR monitor created by a coordinator, run on its schedule against the fakes", () => {
  let flow: GithubFlow;
  const runs: any[][] = [];

  beforeAll(async () => {
    flow = await startGithubFlow({ ORKA_PR_REVIEW_MARKER_SECRET: MARKER_KEY });
    for (const agent of [
      { metadata: { name: "lead" }, spec: { providerRef: { name: "peer" }, model: { name: "m-lead" }, tools: [{ name: "create_pr_monitor" }] } },
      { metadata: { name: "reviewer" }, spec: { providerRef: { name: "peer" }, model: { name: "m-reviewer" }, coordination: { enabled: true } } },
    ]) {
      const created = await flow.api("POST", "/agents", agent);
      expect(created.status, JSON.stringify(created.body)).toBe(201);
    }
  }, 30_000);
  afterAll(() => flow?.stop());

  it("reviews an unmarked pull request once, with the forge credential, and skips it on the next run", async () => {
    const head = await flow.github.commit(FLOW_REPO, "feature", { "app.txt": "one\ntwo\nthree\nfour\n" });
    const pr = await flow.github.openPullRequest(FLOW_REPO, { head: "feature", title: "Count to four", user: "dev" });
    await flow.github.addCheckRun(FLOW_REPO, head, { name: "unit" });
    const marker = reviewMarker(MARKER_KEY, { owner: "acme", repo: "app", pr, headSha: head });

    flow.llm.script("m-reviewer", monitorModel(runs, FLOW_REPO_URL));
    let created: any;
    flow.llm.script("m-lead", [
      {
        toolCalls: [{
          name: "create_pr_monitor",
          arguments: { name: "app reviews", repo_url: FLOW_REPO_URL, schedule: EVERY_SECOND, agent_ref: "reviewer", gitSecretRef: "gh-read", forgeSecretRef: "gh-forge" },
        }],
      },
      (body) => {
        created = JSON.parse(toolResultsOf(body)[0]!);
        return { text: "monitor created" };
      },
    ]);
    expect((await flow.api("POST", "/tasks", { name: "lead", type: "ai", agentRef: "lead", prompt: "watch acme/app's pull requests" })).status).toBe(201);
    expect((await flow.waitFor("lead", ["Succeeded", "Failed"])).status?.phase).toBe("Succeeded");
    expect(created).toMatchObject({ success: true, data: { monitor_name: "app reviews", schedule: EVERY_SECOND } });
    const monitor: string = created.data.name;

    const scheduledRuns = async (): Promise<any[]> =>
      (await flow.api("GET", `/tasks?labelSelector=${encodeURIComponent(`orka.ai/parent-task=${monitor},orka.ai/scheduled-run=true`)}`)).body.items
        .filter((t: any) => t.status?.phase === "Succeeded");
    for (let waited = 0; (runs.length < 2 || (await scheduledRuns()).length < 2) && waited < 60_000; waited += 100) await new Promise((r) => setTimeout(r, 100));
    // Each run is a scheduled child that checked the repository out with the read Secret.
    const finished = await scheduledRuns();
    // Its runs stop here; a run already going could only skip, as the second did.
    expect((await flow.api("DELETE", `/tasks/${monitor}`)).status).toBe(204);
    expect(runs.length).toBeGreaterThanOrEqual(2);
    expect(finished.length).toBeGreaterThanOrEqual(2);
    for (const run of finished) {
      expect(run.metadata.name).toMatch(new RegExp(`^${monitor}-\\d{10}$`));
      expect(run.status.workspace).toMatchObject({ repository: FLOW_REPO_URL, branch: "main" });
    }
    // (A later run may still be cloning: its request has no status yet.)
    expect(new Set(flow.gitPeer.requests.map((r) => `${r.repo} ${r.identity}`))).toEqual(new Set([`${FLOW_REPO} reader`]));
    expect(flow.gitPeer.requests.filter((r) => r.status >= 300)).toEqual([]);
    const prompts = flow.llm.requests.filter((r) => r.body.model === "m-reviewer").map((r) => JSON.stringify(r.body.messages));
    for (const prompt of prompts) expect(prompt).toContain(`Pass repo_url \\"${FLOW_REPO_URL}\\" unchanged to every tool call`);

    const [first, second] = runs;
    expect(first[0].pull_requests.map((p: any) => p.number)).toEqual([pr]);
    expect(first[1]).toEqual({ found: false, pr_number: pr, head_sha: head, marker, message: "no review marker found for this PR head SHA" });
    expect(first[2]).toMatchObject({ status: "passed", pr_number: pr });
    expect(first[3]).toMatchObject({ status: "fetched", head_sha: head, pr_title: "Count to four" });
    expect(first[4]).toMatchObject({ status: "submitted" });
    expect(second).toHaveLength(2);
    expect(second[1]).toMatchObject({ found: true, pr_number: pr, head_sha: head, marker, author: "orka-forge", source: "review" });

    const reviews = flow.github.pullRequest(FLOW_REPO, pr).pull.reviews;
    expect(reviews).toHaveLength(1);
    expect(reviews[0]!.user.login).toBe("orka-forge");
    expect(reviews[0]!.body).toContain(marker);
    expect(reviews[0]!.state).toBe("COMMENTED");
    // Reads went with the read Secret, the one review with the forge Secret.
    const writes = flow.github.log.filter((e) => e.method !== "GET");
    expect(writes.map((e) => `${e.method} ${e.path} ${e.login} ${e.status}`)).toEqual([`POST /repos/${FLOW_REPO}/pulls/${pr}/reviews orka-forge 200`]);
    expect(new Set(flow.github.log.filter((e) => e.method === "GET").map((e) => e.login))).toEqual(new Set(["reader"]));
  }, 90_000);
});
