// The quickstart's requests and answers, typed from the API's OpenAPI document.
import type { components, paths } from "./api";

type Event = paths["/api/v1/events"]["post"]["requestBody"];
type Purchase = components["schemas"]["PurchaseEventInputRequest"];
type Accepted = paths["/api/v1/events"]["post"]["responses"][202]["content"]["application/json"];
type Detail = paths["/api/v1/events/{event_id}"]["get"]["responses"][200]["content"]["application/json"];
type Refusal = components["schemas"]["Error"];

const purchase: Purchase = {
  type: "purchase",
  order_id: "A-1001",
  amount: 4000,
  currency: "EUR",
  customer: { email: "kim@example.com" },
};
const body: NonNullable<Event>["content"]["application/json"] = purchase;
const accepted: Accepted = {
  id: "8c1b0f6e-0000-4000-8000-000000000000",
  type: "purchase",
  status: "received",
  livemode: false,
};

function claimStatus(event: Detail): string | null {
  return event.claim ? event.claim.status : null;
}
function refusalCode(answer: Refusal): string {
  return answer.error.code;
}

// The types refuse what the API refuses: an amount as a string, an unknown event type.
// @ts-expect-error amount is an integer of minor units
const wrongAmount: Purchase = { ...purchase, amount: "40.00" };
// @ts-expect-error type is one of the event types
const wrongType: Purchase = { ...purchase, type: "sale" };

export { accepted, body, claimStatus, refusalCode, wrongAmount, wrongType };
