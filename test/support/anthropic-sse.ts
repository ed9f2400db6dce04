/**
 * Server-sent events as Anthropic's Messages API streams them, for tests that replay a reply
 * byte for byte on a raw server.
 */

/**
 * One event of the stream: its `event:` line and its JSON `data:` (with its `type`).
 * @example anthropicEvent("content_block_stop", { index: 0 }); // 'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
 */
export const anthropicEvent = (type: string, data: Record<string, unknown>): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

/** The `message_start` every reply begins with. @example server = await rawServer(streaming(MESSAGE_START + text(0, "Hi") + end("end_turn"))); */
export const MESSAGE_START = anthropicEvent("message_start", {
  message: {
    id: "msg_1",
    type: "message",
    role: "assistant",
    model: "claude-sonnet-5-5",
    content: [],
    stop_reason: null,
    usage: { input_tokens: 10, output_tokens: 1 },
  },
});
