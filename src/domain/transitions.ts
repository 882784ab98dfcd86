// The one table of legal payment transitions. Rows: the payment's state; columns: what a merchant
// asks for (capture … refund) or what the payer does at a payer page (pay … abandon). A cell is
// the next state, or the result key (data/codes.json) that refuses the step.
// "approved" resolves by the account's capture mode (manual → authorised, auto → paid);
// "refunded" means partially_refunded or refunded, by the amounts.
import type { PaymentState } from "./codes.js";

export type Action = "capture" | "cancel" | "approve" | "reject" | "refund" | "pay" | "decline" | "hold" | "abandon";
type Target = PaymentState | "approved";
export type Cell = { to: Target } | { refuse: string };

const to = (state: Target): Cell => ({ to: state });
const refuse = (key: string): Cell => ({ refuse: key });

const TRANSITIONS: Record<PaymentState, Record<Action, Cell>> = {
  pending: {
    capture: refuse("payment_pending"),
    cancel: refuse("payment_pending"),
    approve: refuse("not_under_review"),
    reject: refuse("not_under_review"),
    refund: refuse("payment_pending"),
    pay: to("approved"),
    decline: to("declined"),
    hold: to("review"),
    abandon: to("cancelled"),
  },
  authorised: {
    capture: to("paid"),
    cancel: to("cancelled"),
    approve: refuse("not_under_review"),
    reject: refuse("not_under_review"),
    refund: refuse("not_captured"),
    pay: refuse("payment_not_pending"),
    decline: refuse("payment_not_pending"),
    hold: refuse("payment_not_pending"),
    abandon: refuse("payment_not_pending"),
  },
  review: {
    capture: refuse("payment_under_review"),
    cancel: to("cancelled"),
    approve: to("approved"),
    reject: to("cancelled"),
    refund: refuse("payment_under_review"),
    pay: refuse("payment_not_pending"),
    decline: refuse("payment_not_pending"),
    hold: refuse("payment_not_pending"),
    abandon: refuse("payment_not_pending"),
  },
  paid: {
    capture: refuse("already_captured"),
    cancel: refuse("already_captured"),
    approve: refuse("not_under_review"),
    reject: refuse("not_under_review"),
    refund: to("partially_refunded"),
    pay: refuse("payment_not_pending"),
    decline: refuse("payment_not_pending"),
    hold: refuse("payment_not_pending"),
    abandon: refuse("payment_not_pending"),
  },
  partially_refunded: {
    capture: refuse("already_captured"),
    cancel: refuse("already_captured"),
    approve: refuse("not_under_review"),
    reject: refuse("not_under_review"),
    refund: to("partially_refunded"),
    pay: refuse("payment_not_pending"),
    decline: refuse("payment_not_pending"),
    hold: refuse("payment_not_pending"),
    abandon: refuse("payment_not_pending"),
  },
  refunded: {
    capture: refuse("already_captured"),
    cancel: refuse("already_captured"),
    approve: refuse("not_under_review"),
    reject: refuse("not_under_review"),
    refund: refuse("fully_refunded"),
    pay: refuse("payment_not_pending"),
    decline: refuse("payment_not_pending"),
    hold: refuse("payment_not_pending"),
    abandon: refuse("payment_not_pending"),
  },
  cancelled: {
    capture: refuse("already_cancelled"),
    cancel: refuse("already_cancelled"),
    approve: refuse("not_under_review"),
    reject: refuse("not_under_review"),
    refund: refuse("already_cancelled"),
    pay: refuse("payment_not_pending"),
    decline: refuse("payment_not_pending"),
    hold: refuse("payment_not_pending"),
    abandon: refuse("payment_not_pending"),
  },
  declined: {
    capture: refuse("payment_declined"),
    cancel: refuse("payment_declined"),
    approve: refuse("not_under_review"),
    reject: refuse("not_under_review"),
    refund: refuse("payment_declined"),
    pay: refuse("payment_not_pending"),
    decline: refuse("payment_not_pending"),
    hold: refuse("payment_not_pending"),
    abandon: refuse("payment_not_pending"),
  },
};

export function transition(state: PaymentState, action: Action): Cell {
  return TRANSITIONS[state][action];
}
