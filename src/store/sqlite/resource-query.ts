import { OrkaError } from "../../util/errors.ts";
import type { LabelRequirement } from "../resource-store.ts";

/** Where a page starts: after this object, in (namespace, name) order. */
export interface ListPosition {
  namespace: string;
  name: string;
}

export interface ResourceFilter {
  kind: string;
  namespace?: string;
  after?: ListPosition;
  selector: LabelRequirement[];
}

/** The FROM and WHERE of a list, as SQL with its parameters; its rows are `r`, ordered by `orderBy`. */
export interface ResourceQuery {
  from: string;
  where: string;
  orderBy: string;
  params: unknown[];
}

/** Requirements that can drive a list from the label index, the most selective kind first. */
const DRIVER_PREFERENCE: LabelRequirement["op"][] = ["=", "in", "exists"];

/**
 * The SQL for the objects of a kind matching a filter, every label requirement answered by the
 * resource_labels index. One requirement that a match must have (a value or the key) drives the
 * query from that index, so a selective list reads only the objects it returns; the others are
 * checked per candidate by primary key. Values stay parameters: the SQL text depends only on the
 * filter's shape.
 */
export function resourceQuery(filter: ResourceFilter): ResourceQuery {
  const driver = DRIVER_PREFERENCE.map((op) => filter.selector.find((r) => r.op === op)).find((r) => r !== undefined);
  // Position columns come from the driving table, so its index serves the range and the order.
  const at = driver ? "d" : "r";
  const where: string[] = [];
  const params: unknown[] = [];
  let from = "resources r";
  if (driver) {
    // Named, because without statistics SQLite may prefer walking the primary key in list order.
    from = "resource_labels d INDEXED BY resource_labels_by_value JOIN resources r ON r.kind = d.kind AND r.namespace = d.namespace AND r.name = d.name";
    where.push(`d.kind = +? AND d.key = +?${valueCondition("d", driver)}`);
    params.push(filter.kind, driver.key, ...driver.values);
  } else {
    where.push("r.kind = +?");
    params.push(filter.kind);
  }
  if (filter.namespace !== undefined) {
    where.push(`${at}.namespace = +?`);
    params.push(filter.namespace);
  }
  if (filter.after && filter.namespace !== undefined) {
    // Within one namespace the name alone is the position: SQLite seeks on it, not on a row value after an equality.
    if (filter.after.namespace !== filter.namespace) {
      throw new OrkaError("invalid_argument", "invalid continue token: it continues a list of another namespace; pass back the metadata.continue of the previous page");
    }
    where.push(`${at}.name > ?`);
    params.push(filter.after.name);
  } else if (filter.after) {
    where.push(`(${at}.namespace, ${at}.name) > (?, ?)`);
    params.push(filter.after.namespace, filter.after.name);
  }
  for (const requirement of filter.selector) {
    if (requirement === driver) continue;
    const negated = requirement.op === "!=" || requirement.op === "!exists" || requirement.op === "notin";
    where.push(
      `${negated ? "NOT EXISTS" : "EXISTS"} (SELECT 1 FROM resource_labels l WHERE l.kind = r.kind AND l.namespace = r.namespace AND l.name = r.name AND l.key = +?${valueCondition("l", requirement)})`,
    );
    params.push(requirement.key, ...requirement.values);
  }
  return { from, where: where.join(" AND "), orderBy: `${at}.namespace, ${at}.name`, params };
}

/** The value test of a requirement on label row `alias` (its key matched already); empty for a key test. */
function valueCondition(alias: string, requirement: LabelRequirement): string {
  switch (requirement.op) {
    case "=":
    case "!=":
      return ` AND ${alias}.value = +?`;
    case "in":
    case "notin":
      return ` AND ${alias}.value IN (${requirement.values.map(() => "?").join(", ")})`;
    case "exists":
    case "!exists":
      return "";
  }
}
