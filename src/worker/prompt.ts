/** System prompt assembly (spec P3.3): skills, then the Agent's or Task's prompt, then guidance. */
export function assembleSystemPrompt(parts: { skills: string[]; systemPrompt: string; autonomous: boolean }): string {
  const sections: string[] = [];
  if (parts.skills.length > 0) sections.push(parts.skills.join("\n\n"));
  if (parts.systemPrompt) sections.push(parts.systemPrompt);
  if (parts.autonomous) {
    sections.push(
      "You are running autonomously across iterations. Keep your plan current with update_plan, " +
        "and set goal_complete when the goal is reached.",
    );
  }
  return sections.join("\n\n");
}
