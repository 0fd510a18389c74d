/**
 * Reports dependency-cruiser's verdict on the import rules (.dependency-cruiser.cjs) as one line per
 * violation, a cycle written out as its whole path, so a failing `npm test` shows every broken
 * import at a glance. Used as `depcruise --output-type plugin:<absolute path of this file>`.
 */
import type { ICruiseResult, IReporterOutput, IViolation } from "dependency-cruiser";

export function violationLine(violation: IViolation): string {
  const chain = violation.cycle ? [violation.from, ...violation.cycle.map((step) => step.name)] : [violation.from, violation.to];
  return `${violation.rule.severity} ${violation.rule.name}: ${chain.join(" → ")}`;
}

export default function importRulesReport(result: ICruiseResult): IReporterOutput {
  const { violations, error, totalCruised } = result.summary;
  const lines = violations.map(violationLine);
  lines.push(
    violations.length === 0
      ? `import rules: no violations in ${totalCruised} modules.`
      : `import rules: ${violations.length} violations in ${totalCruised} modules; each rule's reason is in .dependency-cruiser.cjs.`,
  );
  return { output: `${lines.join("\n")}\n`, exitCode: error };
}
