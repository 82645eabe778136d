// Verify a JoyBack webhook (Node 18+, no dependencies).
//
// JoyBack-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>] where each v1 is
// HMAC-SHA256(your endpoint's secret, "<t>." + the raw body). Use the raw body bytes, not parsed
// and re-serialised JSON. Accept if any v1 matches (two during a secret rotation).
const crypto = require("crypto");

function verifyWebhook(rawBody, header, secret, toleranceSeconds = 300) {
  const parts = header.split(",").map((item) => item.split("=", 2)).filter((p) => p.length === 2);
  const timestamps = parts.filter(([key]) => key === "t").map(([, value]) => value);
  if (timestamps.length !== 1 || !/^\d+$/.test(timestamps[0])) return false;
  const timestamp = Number(timestamps[0]);
  if (Math.abs(Date.now() / 1000 - timestamp) > toleranceSeconds) return false;
  const expected = crypto
    .createHmac("sha256", secret)
    .update(Buffer.concat([Buffer.from(`${timestamp}.`), Buffer.from(rawBody)]))
    .digest("hex");
  return parts.some(
    ([key, value]) =>
      key === "v1" &&
      value.length === expected.length &&
      crypto.timingSafeEqual(Buffer.from(value), Buffer.from(expected)),
  );
}

module.exports = { verifyWebhook };

if (require.main === module) {
  // node verify_webhook.js "<JoyBack-Signature header>" < body.json   (secret in JOYBACK_WEBHOOK_SECRET)
  const chunks = [];
  process.stdin.on("data", (chunk) => chunks.push(chunk));
  process.stdin.on("end", () => {
    const valid = verifyWebhook(Buffer.concat(chunks), process.argv[2], process.env.JOYBACK_WEBHOOK_SECRET);
    console.log(valid ? "valid" : "invalid");
    process.exit(valid ? 0 : 1);
  });
}
