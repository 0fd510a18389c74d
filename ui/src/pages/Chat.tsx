/** The chat orchestrator has not landed yet; the page says so instead of pretending. */
export function Chat() {
  return (
    <div className="page">
      <h1>Chat</h1>
      <p className="state empty">
        Chat with the orchestrator is not built yet. Until it lands, use the OpenAI- or Anthropic-compatible endpoints (<code>/openai/v1</code>, <code>/anthropic/v1</code>) or create
        Tasks.
      </p>
    </div>
  );
}
