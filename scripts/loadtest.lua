-- wrk script for scripts/loadtest: random from/to pairs over nodes 1..N.
--
-- Environment: SSSPD_NODES (N, required), SSSPD_SEED (default 1),
-- SSSPD_ENDPOINT ("route" or "distances"; default "route"),
-- SSSPD_QUERY (extra query-string text, e.g. "&geometry=polyline").
-- Counts 200 (ok), 404 (no route: a correct answer on graphs that are not
-- strongly connected) and everything else (errors) per thread, and prints a
-- summary that scripts/loadtest parses.

local threads = {}
local counter = 0

function setup(thread)
   counter = counter + 1
   thread:set("id", counter)
   table.insert(threads, thread)
end

local n, endpoint, extra
ok, noroute, bad = 0, 0, 0

function init(args)
   n = tonumber(os.getenv("SSSPD_NODES") or "")
   if not n or n < 1 then
      error("SSSPD_NODES must be the number of nodes of the served graph")
   end
   endpoint = os.getenv("SSSPD_ENDPOINT") or "route"
   extra = os.getenv("SSSPD_QUERY") or ""
   local seed = tonumber(os.getenv("SSSPD_SEED") or "1")
   math.randomseed(seed * 7919 + id)
end

function request()
   local s = math.random(1, n)
   local t = math.random(1, n)
   return wrk.format("GET", "/" .. endpoint .. "?from=" .. s .. "&to=" .. t .. extra)
end

function response(status, headers, body)
   if status == 200 then
      ok = ok + 1
   elseif status == 404 then
      noroute = noroute + 1
   else
      bad = bad + 1
   end
end

function done(summary, latency, requests)
   local o, r, b = 0, 0, 0
   for _, t in ipairs(threads) do
      o = o + t:get("ok")
      r = r + t:get("noroute")
      b = b + t:get("bad")
   end
   local e = summary.errors
   local sock = e.connect + e.read + e.write + e.timeout
   local secs = summary.duration / 1e6
   io.write(string.format("requests      %d in %.2f s\n", summary.requests, secs))
   io.write(string.format("requests/s    %.0f\n", summary.requests / secs))
   for _, p in ipairs({50, 90, 99, 99.9}) do
      io.write(string.format("latency p%-5s %.3f ms\n", tostring(p), latency:percentile(p) / 1000))
   end
   io.write(string.format("latency max   %.3f ms\n", latency.max / 1000))
   io.write(string.format("answers       ok=%d noroute=%d errors=%d socket_errors=%d\n",
                          o, r, b, sock))
end
