import { z } from "zod";
import { MAX_VALIDATION_COMMANDS, validationCommand, validationTimeout } from "../../resources/validation.ts";
import { scopeFields } from "../github/schemas.ts";

/**
 * The arguments of run_validation, checked by the worker's executor and again, strictly, by the control
 * plane. `commands` only picks among the monitor's own commands; it cannot name a new one.
 */
export const runValidationArgs = z.object({
  pr_number: z.number().int().describe("GitHub pull request number whose head to validate"),
  commands: z
    .array(validationCommand)
    .max(MAX_VALIDATION_COMMANDS)
    .optional()
    .describe("Which of the monitor's configured validation commands to run, written exactly as configured (default: all of them, in their configured order)"),
  timeout: validationTimeout.optional().describe("Time limit for all the commands together, such as 5m (default: the monitor's, else 10m; at most 30m)"),
  ...scopeFields,
});
export type RunValidationArgs = z.output<typeof runValidationArgs>;
