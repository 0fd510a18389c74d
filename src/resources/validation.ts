import { z } from "zod";
import { boundedDurationText } from "./meta.ts";

export const MAX_VALIDATION_COMMANDS = 20;
export const MAX_VALIDATION_COMMAND_CHARS = 1000;
export const DEFAULT_VALIDATION_TIMEOUT = "10m";
/** The longest one run_validation call may take, whatever the monitor or the model asks for. */
export const MAX_VALIDATION_TIMEOUT_MS = 30 * 60_000;

/** A run's time limit: from 1 ms to 30 minutes. */
export const validationTimeout = boundedDurationText(MAX_VALIDATION_TIMEOUT_MS, "30m");

/** One shell command as the monitor's creator wrote it: run_validation runs exactly these, never one a model writes. */
export const validationCommand = z
  .string()
  .trim()
  .min(1, "must not be blank")
  .max(MAX_VALIDATION_COMMAND_CHARS, `must be at most ${MAX_VALIDATION_COMMAND_CHARS} characters`);

/**
 * What a PR monitor's runs may check a pull request's head with (`spec.validation`): the commands,
 * each run with `sh -c` in the sandbox over a copy of the head, and the default time limit of a run.
 */
export const validationSchema = z.strictObject({
  commands: z
    .array(validationCommand)
    .min(1, "must list at least one command")
    .max(MAX_VALIDATION_COMMANDS, `must list at most ${MAX_VALIDATION_COMMANDS} commands`)
    .refine((commands) => new Set(commands).size === commands.length, "must not list a command twice"),
  timeout: validationTimeout.optional(),
});
export type Validation = z.infer<typeof validationSchema>;
