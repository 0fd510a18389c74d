import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import { notFound, sendError } from "./errors.ts";

/** Where `npm run build:ui` puts the dashboard. */
const DASHBOARD_DIR = fileURLToPath(new URL("../../dist/ui", import.meta.url));

// First path segments that belong to programs but no surface serves (yet): they never get the app, even from a browser.
const PROGRAM_SEGMENTS = ["healthz", "readyz", "metrics", "openapi.json", "mcp", ".well-known"];

// The app talks only to this server; nothing else may load or run in its pages.
const CONTENT_SECURITY_POLICY = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'";

export interface DashboardOptions {
  /** First path segments of the mounted surfaces (`api`, …): their bare names are not pages either. */
  surfaceSegments: string[];
  dir?: string;
}

/**
 * The built dashboard at / (its files, then index.html for any other page path), and the answer to every
 * path nothing else serves: the app for a browser navigating to a page, a 404 a program can read for anything else.
 */
export function dashboardPlugin({ surfaceSegments, dir = DASHBOARD_DIR }: DashboardOptions): FastifyPluginAsync {
  const machineSegments = new Set([...surfaceSegments, ...PROGRAM_SEGMENTS]);
  /** A GET (or HEAD) that accepts HTML, outside the machine paths. */
  const wantsPage = (request: FastifyRequest) => {
    const firstSegment = request.url.split("?")[0].split("/")[1];
    const acceptsHtml = (request.headers.accept ?? "").includes("text/html");
    return (request.method === "GET" || request.method === "HEAD") && acceptsHtml && !machineSegments.has(firstSegment);
  };
  const noRoute = notFound(sendError);
  return async (app) => {
    const page = serveApp(app, dir);
    app.setNotFoundHandler((request, reply) => (wantsPage(request) ? page(request, reply) : noRoute(request, reply)));
    app.addHook("onSend", async (_request, reply, payload) => {
      if (String(reply.getHeader("content-type") ?? "").startsWith("text/html")) reply.header("content-security-policy", CONTENT_SECURITY_POLICY).header("x-content-type-options", "nosniff");
      return payload;
    });
  };
}

/** Serves the built files; the app's page for any other page path, or a notice when it is not built. */
function serveApp(app: Parameters<FastifyPluginAsync>[0], dir: string): (request: FastifyRequest, reply: FastifyReply) => FastifyReply {
  if (!existsSync(join(dir, "index.html"))) {
    return (_request, reply) =>
      reply.code(503).type("text/plain").send("The dashboard is not built. Run `npm run build:ui` (npm start does it for you), then reload.\n");
  }
  void app.register(fastifyStatic, {
    root: dir,
    prefix: "/",
    wildcard: false,
    index: "index.html",
    cacheControl: false,
    // Built assets have content hashes in their names and never change; the page itself must be revalidated.
    setHeaders: (reply, path) => reply.header("cache-control", path.endsWith(".html") ? "no-cache" : "public, max-age=31536000, immutable"),
  });
  return (_request, reply) => reply.sendFile("index.html");
}
