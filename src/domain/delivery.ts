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

/** The delivery fields of any record that has some of them, each as text ("" when absent), in the interface document's order. */
export const deliveryOf = (source: Source): DeliveryInformation =>
  Object.fromEntries(DELIVERY_FIELDS.map((f) => [f, source?.[f] ?? ""])) as unknown as DeliveryInformation;

/** The delivery of a payment sent without one: one shared, frozen object for all of them. */
export const NO_DELIVERY: DeliveryInformation = Object.freeze(deliveryOf(undefined));
