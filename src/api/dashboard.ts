import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

/** Where `npm run build:ui` puts the dashboard. */
const DASHBOARD_DIR = fileURLToPath(new URL("../../dist/ui", import.meta.url));

// First path segments that belong to programs, not people: they never get the app, even from a browser.
const MACHINE_SEGMENTS = new Set(["api", "internal", "openai", "anthropic", "healthz", "readyz", "metrics", "openapi.json", "mcp", ".well-known"]);

// The app talks only to this server; nothing else may load or run in its pages.
const CONTENT_SECURITY_POLICY = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'";

/**
 * True for a browser navigating to a page of the app: a GET (or HEAD) that accepts HTML, outside the
 * machine paths. Anything else that matches no route is a client's mistake and gets a 404 it can read.
 */
export function wantsDashboard(request: FastifyRequest): boolean {
  const firstSegment = request.url.split("?")[0].split("/")[1];
  const acceptsHtml = (request.headers.accept ?? "").includes("text/html");
  return (request.method === "GET" || request.method === "HEAD") && acceptsHtml && !MACHINE_SEGMENTS.has(firstSegment);
}

/** Serves the built dashboard at / (its files, then index.html for any other page path). */
export function registerDashboard(app: FastifyInstance, dir = DASHBOARD_DIR): (request: FastifyRequest, reply: FastifyReply) => FastifyReply {
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
  app.addHook("onSend", async (_request, reply, payload) => {
    if (String(reply.getHeader("content-type") ?? "").startsWith("text/html")) reply.header("content-security-policy", CONTENT_SECURITY_POLICY).header("x-content-type-options", "nosniff");
    return payload;
  });
  return (_request, reply) => reply.sendFile("index.html");
}
