import { z } from "zod";

export const skillSpecSchema = z.strictObject({
  displayName: z.string().optional(),
  description: z.string().min(1, "is required"),
  version: z.string().optional(),
  tags: z.array(z.string()).optional(),
  content: z.strictObject({ inline: z.string(), files: z.record(z.string(), z.string()).optional() }),
});
export type SkillSpec = z.infer<typeof skillSpecSchema>;
