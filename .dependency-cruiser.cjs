/**
 * Import rules, checked by `npm test` (one line per violation, scripts/import-rules-report.ts);
 * `npm run check:imports` prints each violation with its rule's reason. The layout they keep is
 * drawn in docs/architecture.md: areas depend on contracts, never on each other's machinery.
 */
const area = (name) => `^src/${name}/`;

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "A module never reaches itself again through its imports: cycles make load order and ownership unclear.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "controller-not-sandbox-or-worker",
      comment: "The controller decides and records; running an attempt is the runner's, running a model loop the worker's.",
      severity: "error",
      from: { path: area("controller") },
      to: { path: [area("sandbox"), area("worker")] },
    },
    {
      name: "api-not-worker-or-local-runner",
      comment: "The API process starts no model loop or sandbox itself: work runs as attempts of the WorkloadRunner.",
      severity: "error",
      from: { path: area("api") },
      to: { path: [area("worker"), area("runner/local"), area("sandbox")] },
    },
    {
      name: "tools-not-runner",
      comment: "Tools get their directories and settings through their context, not from how attempts are run.",
      severity: "error",
      from: { path: area("tools") },
      to: { path: area("runner") },
    },
    {
      name: "github-not-api-worker-runner-sandbox",
      comment: "The GitHub operations run on the control plane for any caller: they take their store, grants and settings as arguments.",
      severity: "error",
      from: { path: area("github") },
      to: { path: [area("api"), area("worker"), area("runner"), area("sandbox")] },
    },
    {
      name: "config-not-concrete-tool",
      comment: "Configuration knows tool settings, not the modules of individual tools.",
      severity: "error",
      from: { path: "^src/config\\.ts$" },
      to: { path: "^src/tools/(core|memory|coordination|custom)/" },
    },
    {
      name: "ui-not-server",
      comment: "The dashboard talks to the server over HTTP only.",
      severity: "error",
      from: { path: "^ui/src/" },
      to: { path: "^src/" },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    doNotFollow: { path: "node_modules" },
    // Packages that name their entry only in `exports` (the Octokit ones have no `main`) resolve as Node resolves them.
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default"] },
    exclude: { path: "node_modules" },
  },
};
