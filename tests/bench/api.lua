-- wrk script for the Cashback API bench (tests/bench/api.py): POST /api/v1/events.
--
--   wrk -t N -c N ... -s api.lua URL -- EXPECTED_STATUS "API_KEY fresh|replay RUN_TAG"
--
-- fresh: every request a new purchase (its own order id and customer) with its own
-- Idempotency-Key. replay: the same key and body every time, stored by a first request made before
-- the run, so each answer is the replayed first one.

local threads = {}

function setup(thread)
   thread:set("number", #threads + 1)
   table.insert(threads, thread)
end

function init(args)
   expected = tonumber(args[1])
   bad = 0
   seen = " "
   local key
   key, mode, tag = args[2]:match("^(%S+) (%S+) (%S+)$")
   counter = 0
   headers = { ["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. key }
end

local template = '{"type":"purchase","order_id":"%s","amount":4000,"currency":"EUR",' ..
   '"customer":{"email":"%s@bench.example"}}'

function request()
   if mode == "replay" then
      headers["Idempotency-Key"] = "bench-replay"
      return wrk.format("POST", nil, headers, string.format(template, "bench-replay", "replay"))
   end
   counter = counter + 1
   local id = tag .. "-" .. number .. "-" .. counter
   headers["Idempotency-Key"] = "key-" .. id
   return wrk.format("POST", nil, headers, string.format(template, id, id))
end

function response(status, headers, body)
   if status ~= expected then
      bad = bad + 1
      if not seen:find(" " .. status .. " ", 1, true) then
         seen = seen .. status .. " "
      end
   end
end

function done(summary, latency, requests)
   local total_bad, statuses = 0, {}
   for _, thread in ipairs(threads) do
      total_bad = total_bad + thread:get("bad")
      for status in thread:get("seen"):gmatch("%d+") do
         statuses[status] = true
      end
   end
   local codes = {}
   for status in pairs(statuses) do
      table.insert(codes, status)
   end
   table.sort(codes)
   local e = summary.errors
   io.write(string.format(
      "wrk-result requests=%d duration_us=%d p50_us=%d p99_us=%d max_us=%d bad=%d " ..
      "connect=%d read=%d write=%d timeout=%d statuses=%s\n",
      summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.max,
      total_bad, e.connect, e.read, e.write, e.timeout, #codes > 0 and table.concat(codes, ",") or "-"))
end
