import { useState } from "react";
import { whoAmI, type Session } from "../api.ts";

/** Sign in with an API token (`orka token create`, or the admin token printed at first start). */
export function Login({ onSignIn }: { onSignIn: (session: Session) => void }) {
  const fromHash = new URLSearchParams(window.location.hash.slice(1)).get("token") ?? "";
  const [token, setToken] = useState(fromHash);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const submit = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const who = await whoAmI(token.trim());
      if (fromHash) window.history.replaceState(null, "", window.location.pathname);
      onSignIn({ token: token.trim(), namespace: who.namespace ?? "default" });
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="login">
      <form
        className="card login-card"
        onSubmit={(event) => {
          event.preventDefault();
          void submit();
        }}
      >
        <h1>
          <span className="logo">●</span> Orka
        </h1>
        <p className="muted">Durable, observable, policy-checked agent work.</p>
        <label htmlFor="token">API token</label>
        <input id="token" type="password" autoComplete="current-password" value={token} onChange={(e) => setToken(e.target.value)} placeholder="orka_…" />
        {error && (
          <p className="state error" role="alert">
            {error}
          </p>
        )}
        <button className="button primary" disabled={busy || !token.trim()} type="submit">
          {busy ? "Signing in…" : "Sign in"}
        </button>
        <p className="hint">
          Use the admin token from <code>.orka/admin-token</code> or one from <code>orka token create</code>. It is kept in this browser only.
        </p>
      </form>
    </div>
  );
}
