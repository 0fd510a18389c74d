// A local Kubernetes API server for the one call Orka makes to it: TokenReview
// (POST /apis/authentication.k8s.io/v1/tokenreviews), driven by the official client.
import http from "node:http";
import { writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { stringify } from "yaml";

export interface KubeApiPeer {
  url: string;
  /** ServiceAccount tokens the API server vouches for, with the username it reports. */
  tokens: Map<string, string>;
  /** Every TokenReview the server received. */
  reviews: { token: string; audiences?: string[]; authorization?: string }[];
  /** Writes a kubeconfig for this server (bearer `clientToken`) and returns its path. */
  writeKubeconfig(path: string): string;
  close(): Promise<void>;
}

export async function startKubeApi(clientToken = "orka-controller-sa-token"): Promise<KubeApiPeer> {
  const tokens = new Map<string, string>();
  const reviews: KubeApiPeer["reviews"] = [];
  const server = http.createServer((request, response) => {
    let text = "";
    request.on("data", (chunk) => (text += chunk));
    request.on("end", () => {
      const send = (status: number, body: unknown) => {
        response.writeHead(status, { "content-type": "application/json" });
        response.end(JSON.stringify(body));
      };
      if (request.headers.authorization !== `Bearer ${clientToken}`) return send(401, { kind: "Status", apiVersion: "v1", status: "Failure", reason: "Unauthorized", code: 401 });
      if (request.method !== "POST" || request.url?.split("?")[0] !== "/apis/authentication.k8s.io/v1/tokenreviews") return send(404, { kind: "Status", code: 404 });
      const review = JSON.parse(text) as { spec: { token: string; audiences?: string[] } };
      reviews.push({ token: review.spec.token, audiences: review.spec.audiences, authorization: request.headers.authorization });
      const username = tokens.get(review.spec.token);
      send(201, {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenReview",
        spec: review.spec,
        status: username
          ? { authenticated: true, user: { username, uid: `uid-${username}`, groups: ["system:serviceaccounts"] }, audiences: review.spec.audiences }
          : { authenticated: false, error: "token is not valid" },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    tokens,
    reviews,
    writeKubeconfig(path) {
      writeFileSync(path, stringify({
        apiVersion: "v1",
        kind: "Config",
        // Plain HTTP on loopback: the official client allows it only with TLS verification off.
        clusters: [{ name: "local", cluster: { server: url, "insecure-skip-tls-verify": true } }],
        users: [{ name: "orka", user: { token: clientToken } }],
        contexts: [{ name: "local", context: { cluster: "local", user: "orka" } }],
        "current-context": "local",
      }));
      return path;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
