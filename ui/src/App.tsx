import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { useMemo, useState, type ReactNode } from "react";
import { Api, loadSession, saveSession, type Session } from "./api.ts";
import { ApiContext } from "./api-context.ts";
import { Link, navigate, usePath } from "./router.tsx";
import { Login } from "./pages/Login.tsx";
import { Overview } from "./pages/Overview.tsx";
import { TaskList } from "./pages/Tasks.tsx";
import { TaskDetail } from "./pages/TaskDetail.tsx";
import { Approvals } from "./pages/Approvals.tsx";
import { MemoryPage } from "./pages/Memory.tsx";
import { Agents, Providers, Tools } from "./pages/Resources.tsx";
import { Sessions } from "./pages/Sessions.tsx";
import { Chat } from "./pages/Chat.tsx";

const NAV: [string, string][] = [
  ["/", "Overview"],
  ["/tasks", "Tasks"],
  ["/approvals", "Approvals"],
  ["/memory", "Memory"],
  ["/agents", "Agents"],
  ["/providers", "Providers"],
  ["/tools", "Tools"],
  ["/sessions", "Sessions"],
  ["/chat", "Chat"],
];

// A failed load is shown at once (pages poll anyway), and a refused one is not asked again and again.
const newQueryClient = () => new QueryClient({ defaultOptions: { queries: { retry: false, refetchOnWindowFocus: false } } });

export function App() {
  const [session, setSession] = useState<Session | undefined>(loadSession);
  const [queries] = useState(newQueryClient);
  const path = usePath();
  const signOut = () => {
    saveSession(undefined);
    setSession(undefined);
    queries.clear();
  };
  const api = useMemo(() => session && new Api(session, signOut), [session]);

  if (!session || !api) {
    return (
      <Login
        onSignIn={(next) => {
          saveSession(next);
          setSession(next);
          if (path === "/login") navigate("/");
        }}
      />
    );
  }
  const changeNamespace = (namespace: string) => {
    const next = { ...session, namespace };
    saveSession(next);
    setSession(next);
  };
  return (
    <QueryClientProvider client={queries}>
      <ApiContext.Provider value={api}>
        <Layout path={path} namespace={session.namespace} onNamespace={changeNamespace} onSignOut={signOut}>
          <Page path={path} key={session.namespace} />
        </Layout>
      </ApiContext.Provider>
    </QueryClientProvider>
  );
}

function Page({ path }: { path: string }) {
  const task = /^\/tasks\/([^/]+)$/.exec(path);
  if (task) return <TaskDetail name={decodeURIComponent(task[1])} />;
  switch (path) {
    case "/":
      return <Overview />;
    case "/tasks":
      return <TaskList />;
    case "/approvals":
      return <Approvals />;
    case "/memory":
      return <MemoryPage />;
    case "/agents":
      return <Agents />;
    case "/providers":
      return <Providers />;
    case "/tools":
      return <Tools />;
    case "/sessions":
      return <Sessions />;
    case "/chat":
      return <Chat />;
    default:
      return (
        <div className="page">
          <h1>Not found</h1>
          <p>
            There is no page at <code>{path}</code>. <Link to="/">Back to the overview</Link>.
          </p>
        </div>
      );
  }
}

function Layout({ path, namespace, onNamespace, onSignOut, children }: { path: string; namespace: string; onNamespace: (ns: string) => void; onSignOut: () => void; children: ReactNode }) {
  const [draft, setDraft] = useState(namespace);
  const active = (to: string) => (to === "/" ? path === "/" : path === to || path.startsWith(`${to}/`));
  return (
    <div className="shell">
      <nav className="sidebar" aria-label="Main">
        <div className="brand">
          <span className="logo" aria-hidden>
            ●
          </span>{" "}
          Orka
        </div>
        {NAV.map(([to, label]) => (
          <Link key={to} to={to} className={active(to) ? "nav active" : "nav"}>
            {label}
          </Link>
        ))}
        <form
          className="namespace"
          onSubmit={(event) => {
            event.preventDefault();
            if (draft.trim()) onNamespace(draft.trim());
          }}
        >
          <label htmlFor="namespace">Namespace</label>
          <input id="namespace" value={draft} onChange={(e) => setDraft(e.target.value)} onBlur={() => draft.trim() && draft.trim() !== namespace && onNamespace(draft.trim())} />
        </form>
        <button className="button plain signout" onClick={onSignOut}>
          Sign out
        </button>
      </nav>
      <main className="content">{children}</main>
    </div>
  );
}
