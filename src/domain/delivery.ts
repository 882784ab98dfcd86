// The interface document's seven delivery fields (transaction query's delivery_information), in its order.
import type { DeliveryInformation } from "./types.js";

export const DELIVERY_FIELDS = [
  "delivery_address",
  "delivery_city",
  "delivery_country",
  "delivery_firstname",
  "delivery_lastname",
  "delivery_postal_code",
  "delivery_state",
] as const satisfies readonly (keyof DeliveryInformation)[];

type Source = Partial<Record<(typeof DELIVERY_FIELDS)[number], string>> | undefined;

/**
 * The delivery fields of any record that has some of them, each as text ("" when absent), in the
 * interface document's order. Set one by one on a plain object, with no list of pairs between:
 * every payment and every query's answer makes one.
 */
export function deliveryOf(source: Source): DeliveryInformation {
  const delivery: Partial<DeliveryInformation> = {};
  for (const field of DELIVERY_FIELDS) delivery[field] = source?.[field] ?? "";
  return delivery as DeliveryInformation;
}

/** The delivery of a payment sent without one: one shared, frozen object for all of them. */
export const NO_DELIVERY: DeliveryInformation = Object.freeze(deliveryOf(undefined));
