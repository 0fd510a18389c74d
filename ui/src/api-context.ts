import { createContext, useContext } from "react";
import type { Api } from "./api.ts";

/** The signed-in session's API client, provided by the app shell to every page below it. */
export const ApiContext = createContext<Api | undefined>(undefined);

export function useApi(): Api {
  const api = useContext(ApiContext);
  if (!api) throw new Error("useApi outside the signed-in app");
  return api;
}
