/**
 * The question a tool call waiting for a human puts, as a box with Approve and Deny buttons
 * (and an optional reason for the model): in the chat under the call, and in the inspector for
 * a run found waiting (after a reload, or a server restart).
 */
import { api } from "./api.ts";
import { h } from "./dom.ts";

/** The fields of an `agent.ToolApprovalRequestEvent`. */
export interface ApprovalRequest {
  readonly prefix: string;
  readonly approvalId: string;
  readonly toolCall: { readonly id: string; readonly name: string; readonly input: unknown };
}

/** A box that sends the answer to run `handlerId` and then says which it was. */
export function approvalBox(handlerId: string, request: ApprovalRequest, onAnswered?: (approved: boolean) => void): HTMLElement {
  const reason = h("input", { type: "text", class: "reason", placeholder: "Reason (optional, for the agent)", "aria-label": "Reason" });
  const answer = async (approved: boolean) => {
    for (const button of box.querySelectorAll("button")) button.disabled = true;
    reason.disabled = true;
    try {
      await api.approve(handlerId, request.approvalId, approved, reason.value.trim() || undefined);
      box.replaceChildren(h("p", { class: approved ? "answer approved" : "answer denied", role: "status" }, approved ? "Approved ✓" : "Denied ✗"));
      onAnswered?.(approved);
    } catch (error) {
      box.append(h("p", { class: "error", role: "alert" }, error instanceof Error ? error.message : String(error)));
      for (const button of box.querySelectorAll("button")) button.disabled = false;
      reason.disabled = false;
    }
  };
  const box = h(
    "div",
    { class: "approval", role: "group", "aria-label": "Approval needed" },
    h("p", { class: "question" }, h("strong", {}, "Approval needed: "), request.prefix.replace(/\s*\(yes\/no\)\s*$/, "")),
    reason,
    h(
      "div",
      { class: "actions" },
      h("button", { type: "button", class: "approve", onclick: () => void answer(true) }, "Approve"),
      h("button", { type: "button", class: "deny", onclick: () => void answer(false) }, "Deny"),
    ),
  );
  return box;
}
